package io.wssgw.interop.wss4j;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;

import javax.xml.XMLConstants;
import javax.xml.parsers.DocumentBuilder;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.transform.OutputKeys;
import javax.xml.transform.Transformer;
import javax.xml.transform.TransformerFactory;
import javax.xml.transform.dom.DOMSource;
import javax.xml.transform.stream.StreamResult;

import io.wssgw.interop.peer.Args;

import org.apache.wss4j.dom.WSConstants;
import org.w3c.dom.Document;
import org.w3c.dom.Element;

/** Document parsing/serialisation and SOAP version detection. */
final class Xml {
    private Xml() {
    }

    /** Set in batch mode, where stdin carries the jobs and "--in -" is not allowed. */
    static volatile boolean stdinReserved;

    static byte[] readInput(String in) throws IOException, Args.UsageException {
        if ("-".equals(in)) {
            if (stdinReserved) {
                throw new Args.UsageException("--in - is not allowed in batch mode (stdin carries the jobs)");
            }
            return System.in.readAllBytes();
        }
        return Files.readAllBytes(Path.of(in));
    }

    static Document parse(byte[] data) throws Exception {
        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        f.setNamespaceAware(true);
        f.setFeature(XMLConstants.FEATURE_SECURE_PROCESSING, true);
        f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
        f.setExpandEntityReferences(false);
        DocumentBuilder b = f.newDocumentBuilder();
        b.setErrorHandler(null);
        try (InputStream is = new java.io.ByteArrayInputStream(data)) {
            return b.parse(is);
        }
    }

    /** "1.1" or "1.2"; throws if the document element is not a SOAP Envelope. */
    static String soapVersion(Document doc) {
        Element e = doc.getDocumentElement();
        String ns = e.getNamespaceURI();
        if (!"Envelope".equals(e.getLocalName())) {
            throw new IllegalArgumentException("document element is not a SOAP Envelope: " + e.getNodeName());
        }
        if (WSConstants.URI_SOAP11_ENV.equals(ns)) {
            return "1.1";
        }
        if (WSConstants.URI_SOAP12_ENV.equals(ns)) {
            return "1.2";
        }
        throw new IllegalArgumentException("unknown SOAP envelope namespace: " + ns);
    }

    static byte[] serialize(Document doc) throws Exception {
        Transformer t = TransformerFactory.newInstance().newTransformer();
        t.setOutputProperty(OutputKeys.ENCODING, "UTF-8");
        t.setOutputProperty(OutputKeys.INDENT, "no");
        ByteArrayOutputStream bos = new ByteArrayOutputStream();
        t.transform(new DOMSource(doc), new StreamResult(bos));
        return bos.toByteArray();
    }

    static void writeOutput(String out, byte[] data, OutputStream stdout) throws IOException {
        if (out == null || "-".equals(out)) {
            stdout.write(data);
            stdout.flush();
            return;
        }
        Path p = Path.of(out);
        Path tmp = p.resolveSibling(p.getFileName() + ".tmp" + ProcessHandle.current().pid() + "-"
            + Thread.currentThread().getId());
        Files.write(tmp, data);
        Files.move(tmp, p, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
            java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }
}
