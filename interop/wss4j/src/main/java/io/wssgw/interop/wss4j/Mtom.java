package io.wssgw.interop.wss4j;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import javax.xml.transform.OutputKeys;
import javax.xml.transform.Transformer;
import javax.xml.transform.TransformerFactory;
import javax.xml.transform.dom.DOMSource;
import javax.xml.transform.stream.StreamResult;

import io.wssgw.interop.peer.Args;

import org.apache.wss4j.dom.WSConstants;
import org.apache.wss4j.dom.util.WSSecurityUtil;
import org.w3c.dom.Attr;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NamedNodeMap;
import org.w3c.dom.Node;

/**
 * MTOM/XOP and SwA packaging around WSS4J: attachments from files, xop:Include elements in the Body,
 * the multipart/related package (XOP 1.0 §4, MTOM §3 / SwA 1.1), and the trailing-signature layout in
 * which the ds:Signature's children travel XOP-included in the last MIME part.
 */
final class Mtom {
    private Mtom() {
    }

    static final String XOP_NS = "http://www.w3.org/2004/08/xop/include";
    /** Namespace of the wrapper elements the peer puts into the Body around each xop:Include. */
    static final String ATT_NS = "urn:wssgw:interop:attachment";
    static final String ROOT_ID = "root.message@wss4j-peer";

    /** Attachments from --attachment FILE, --attachment-type CT and --content-id ID (i-th of each). */
    static Attachments load(Args a) throws Exception {
        List<String> files = a.all("attachment");
        List<String> types = a.all("attachment-type");
        List<String> ids = a.all("content-id");
        if (types.size() > files.size() || ids.size() > files.size()) {
            throw new Args.UsageException("more --attachment-type/--content-id than --attachment flags");
        }
        Attachments store = new Attachments();
        for (int i = 0; i < files.size(); i++) {
            String type = i < types.size() ? types.get(i) : "application/octet-stream";
            String id = i < ids.size() ? ids.get(i) : "att" + i + "." + UUID.randomUUID() + "@wss4j-peer";
            Map<String, String> h = new LinkedHashMap<>();
            h.put("Content-Type", type);
            h.put("Content-Transfer-Encoding", "binary");
            h.put("Content-ID", "<" + id + ">");
            store.add(new Attachments.Item(id, type, h, Files.readAllBytes(Path.of(files.get(i)))));
        }
        return store;
    }

    /**
     * Puts one {urn:wssgw:interop:attachment}Data element holding an xop:Include per attachment at
     * the end of the Body's first child (the operation element), or of the Body if it has none.
     */
    static void insertIncludes(Document doc, Attachments store) {
        Element body = WSSecurityUtil.findBodyElement(doc);
        Element target = body;
        for (Node n = body.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element e) {
                target = e;
                break;
            }
        }
        for (Attachments.Item it : store.items()) {
            Element data = doc.createElementNS(ATT_NS, "att:Data");
            data.setAttributeNS(WSConstants.XMLNS_NS, "xmlns:att", ATT_NS);
            data.appendChild(include(doc, it.id));
            target.appendChild(data);
        }
    }

    static Element include(Document doc, String id) {
        Element inc = doc.createElementNS(XOP_NS, "xop:Include");
        inc.setAttributeNS(WSConstants.XMLNS_NS, "xmlns:xop", XOP_NS);
        inc.setAttributeNS(null, "href", "cid:" + cidEncode(id));
        return inc;
    }

    /** RFC 2392: the cid URL is the %-encoded addr-spec. '+' is encoded too (WSS4J URL-form-decodes). */
    static String cidEncode(String id) {
        StringBuilder sb = new StringBuilder();
        for (byte b : id.getBytes(StandardCharsets.UTF_8)) {
            char c = (char) (b & 0xff);
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                || "-._~@!$&'()*,;=:".indexOf(c) >= 0) {
                sb.append(c);
            } else {
                sb.append('%').append(String.format("%02X", (int) c));
            }
        }
        return sb.toString();
    }

    /** Inverse of cidEncode: %XX only ('+' stays '+'). */
    static String cidDecode(String href) {
        if (!href.regionMatches(true, 0, "cid:", 0, 4)) {
            throw new IllegalArgumentException("xop:Include href is not a cid: URL: " + href);
        }
        String s = href.substring(4);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '%' && i + 2 < s.length()) {
                out.write(Integer.parseInt(s.substring(i + 1, i + 3), 16));
                i += 2;
            } else {
                out.writeBytes(String.valueOf(c).getBytes(StandardCharsets.UTF_8));
            }
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    /** Root-part Content-Type: XOP for MTOM, the bare SOAP type for a plain SwA package. */
    static String rootType(boolean mtom, String soap) {
        String soapType = "1.2".equals(soap) ? "application/soap+xml" : "text/xml";
        return mtom ? "application/xop+xml; charset=UTF-8; type=\"" + soapType + "\"" : soapType + "; charset=UTF-8";
    }

    /** The package's own Content-Type (RFC 2387 type/start, MTOM start-info). */
    static String packageType(boolean mtom, String soap, String boundary) {
        String soapType = "1.2".equals(soap) ? "application/soap+xml" : "text/xml";
        return "multipart/related; type=\"" + (mtom ? "application/xop+xml" : soapType) + "\"; boundary=\""
            + boundary + "\"; start=\"<" + ROOT_ID + ">\"" + (mtom ? "; start-info=\"" + soapType + "\"" : "");
    }

    static List<Mime.Part> parts(byte[] root, boolean mtom, String soap, Attachments store) {
        List<Mime.Part> parts = new ArrayList<>();
        Map<String, String> h = new LinkedHashMap<>();
        h.put("Content-Type", rootType(mtom, soap));
        h.put("Content-Transfer-Encoding", "binary");
        h.put("Content-ID", "<" + ROOT_ID + ">");
        parts.add(new Mime.Part(h, root));
        for (Attachments.Item it : store.items()) {
            // An Attachment-Complete encryption result carries no headers (they are inside the
            // ciphertext): the part keeps its Content-ID and gets the EncryptedData's MimeType.
            Map<String, String> ah = new LinkedHashMap<>();
            ah.put("Content-Type", it.mimeType != null ? it.mimeType : "application/octet-stream");
            ah.put("Content-Transfer-Encoding", "binary");
            ah.put("Content-ID", "<" + it.id + ">");
            for (Map.Entry<String, String> e : it.headers.entrySet()) {
                if (!e.getKey().matches("(?i)Content-(Type|Transfer-Encoding|ID)")) {
                    ah.put(e.getKey(), e.getValue());
                }
            }
            parts.add(new Mime.Part(ah, it.bytes));
        }
        return parts;
    }

    /**
     * Test-only generator for the trailing-signature layout: moves every child of each ds:Signature in
     * the Security header into a new last part and leaves {@code <xop:Include href="cid:…"/>} in its
     * place. Returns the new parts (to append after the attachments).
     */
    static List<Mime.Part> detachSignatures(Document doc) throws Exception {
        List<Mime.Part> out = new ArrayList<>();
        for (Element sig : securitySignatures(doc)) {
            ByteArrayOutputStream content = new ByteArrayOutputStream();
            List<Node> kids = new ArrayList<>();
            for (Node n = sig.getFirstChild(); n != null; n = n.getNextSibling()) {
                kids.add(n);
            }
            for (Node n : kids) {
                if (n instanceof Element e) {
                    content.writeBytes(serializeFragment(e));
                } else if (n.getNodeType() == Node.TEXT_NODE) {
                    content.writeBytes(n.getNodeValue().getBytes(StandardCharsets.UTF_8));
                }
                sig.removeChild(n);
            }
            String id = "sig." + UUID.randomUUID() + "@wss4j-peer";
            sig.appendChild(include(doc, id));
            Map<String, String> h = new LinkedHashMap<>();
            h.put("Content-Type", "application/xml; charset=UTF-8");
            h.put("Content-Transfer-Encoding", "binary");
            h.put("Content-ID", "<" + id + ">");
            out.add(new Mime.Part(h, content.toByteArray()));
        }
        return out;
    }

    /** ds:Signature elements that are direct children of a wsse:Security header block. */
    static List<Element> securitySignatures(Document doc) {
        List<Element> out = new ArrayList<>();
        org.w3c.dom.NodeList secs = doc.getElementsByTagNameNS(WSConstants.WSSE_NS, "Security");
        for (int i = 0; i < secs.getLength(); i++) {
            for (Node n = secs.item(i).getFirstChild(); n != null; n = n.getNextSibling()) {
                if (n instanceof Element e && "Signature".equals(e.getLocalName())
                    && WSConstants.SIG_NS.equals(e.getNamespaceURI())) {
                    out.add(e);
                }
            }
        }
        return out;
    }

    private static byte[] serializeFragment(Element e) throws Exception {
        Transformer t = TransformerFactory.newInstance().newTransformer();
        t.setOutputProperty(OutputKeys.OMIT_XML_DECLARATION, "yes");
        t.setOutputProperty(OutputKeys.ENCODING, "UTF-8");
        ByteArrayOutputStream bos = new ByteArrayOutputStream();
        t.transform(new DOMSource(e), new StreamResult(bos));
        return bos.toByteArray();
    }

    /**
     * Re-assembly of a trailing signature: each ds:Signature in the Security header whose only element
     * child is an xop:Include gets the XML content of the referenced part, parsed in the namespace
     * context of the ds:Signature element. The part is removed from the store (it is not an
     * attachment). Returns the Content-IDs of the parts used.
     */
    static List<String> reassemble(Document doc, Attachments store) throws Exception {
        List<String> used = new ArrayList<>();
        for (Element sig : securitySignatures(doc)) {
            Element inc = onlyChildElement(sig);
            if (inc == null || !"Include".equals(inc.getLocalName()) || !XOP_NS.equals(inc.getNamespaceURI())) {
                continue;
            }
            String id = cidDecode(inc.getAttributeNS(null, "href"));
            Attachments.Item part = store.remove(id);
            if (part == null) {
                throw new IllegalArgumentException("trailing signature: no MIME part with Content-ID <" + id + ">");
            }
            for (Node n : parseInContext(sig, part.bytes)) {
                sig.insertBefore(doc.importNode(n, true), inc);
            }
            sig.removeChild(inc);
            used.add(id);
        }
        if (used.isEmpty()) {
            throw new IllegalArgumentException("trailing signature: no ds:Signature holds an xop:Include");
        }
        return used;
    }

    private static Element onlyChildElement(Element parent) {
        Element only = null;
        for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element e) {
                if (only != null) {
                    return null;
                }
                only = e;
            } else if (n.getNodeType() != Node.TEXT_NODE || !n.getNodeValue().isBlank()) {
                return null;
            }
        }
        return only;
    }

    /** Parses an XML fragment as the content of an element carrying ctx's in-scope namespaces. */
    private static List<Node> parseInContext(Element ctx, byte[] fragment) throws Exception {
        String text = new String(fragment, StandardCharsets.UTF_8);
        if (text.startsWith("\uFEFF")) {
            text = text.substring(1);
        }
        if (text.startsWith("<?xml")) {
            int end = text.indexOf("?>");
            text = end < 0 ? text : text.substring(end + 2);
        }
        StringBuilder wrapper = new StringBuilder("<wrapper");
        Map<String, String> decls = new LinkedHashMap<>();
        for (Node n = ctx; n instanceof Element e; n = n.getParentNode()) {
            NamedNodeMap attrs = e.getAttributes();
            for (int i = 0; i < attrs.getLength(); i++) {
                Attr at = (Attr) attrs.item(i);
                if (WSConstants.XMLNS_NS.equals(at.getNamespaceURI())) {
                    decls.putIfAbsent(at.getName(), at.getValue());
                }
            }
        }
        for (Map.Entry<String, String> d : decls.entrySet()) {
            wrapper.append(' ').append(d.getKey()).append("=\"")
                .append(d.getValue().replace("&", "&amp;").replace("\"", "&quot;").replace("<", "&lt;")).append('"');
        }
        wrapper.append('>').append(text).append("</wrapper>");
        Document d = Xml.parse(wrapper.toString().getBytes(StandardCharsets.UTF_8));
        List<Node> out = new ArrayList<>();
        for (Node n = d.getDocumentElement().getFirstChild(); n != null; n = n.getNextSibling()) {
            out.add(n);
        }
        return out;
    }
}
