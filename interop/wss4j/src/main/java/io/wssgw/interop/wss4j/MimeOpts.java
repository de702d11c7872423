package io.wssgw.interop.wss4j;

import java.io.OutputStream;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import javax.crypto.SecretKey;

import io.wssgw.interop.peer.Args;

import org.apache.wss4j.common.WSEncryptionPart;
import org.apache.wss4j.common.crypto.Crypto;
import org.apache.wss4j.common.util.KeyUtils;
import org.apache.wss4j.dom.message.WSSecEncrypt;
import org.apache.wss4j.dom.message.WSSecHeader;
import org.apache.wss4j.dom.message.WSSecSignature;
import org.apache.xml.security.utils.XMLUtils;
import org.w3c.dom.Document;

/**
 * The sign command's MTOM/SwA options: which attachments, how WSS4J protects them, how the package is
 * laid out. Built only when --mime-out is given.
 */
record MimeOpts(Attachments store, boolean mtom, String swa, String swaEncrypt, boolean xopExpand,
                boolean trailing, boolean storeBytes, String mimeOut) {

    static MimeOpts of(Args a, Sign.Profile prof) throws Exception {
        String mimeOut = a.get("mime-out");
        boolean any = !a.all("attachment").isEmpty() || a.get("swa") != null || a.get("swa-encrypt") != null
            || a.flag("xop-expand") || a.flag("trailing-signature") || a.get("package") != null
            || a.flag("store-bytes-in-attachment");
        if (mimeOut == null) {
            if (any) {
                throw new Args.UsageException("--attachment, --swa, --swa-encrypt, --xop-expand, --package and "
                    + "--trailing-signature, --store-bytes-in-attachment need --mime-out FILE");
            }
            return null;
        }
        if ("-".equals(mimeOut)) {
            throw new Args.UsageException("--mime-out must name a file");
        }
        if (prof.symmetric()) {
            throw new Args.UsageException("--mime-out is not supported with the symmetric profiles");
        }
        String swa = mode(a, "swa");
        String swaEncrypt = mode(a, "swa-encrypt");
        boolean xop = a.flag("xop-expand");
        if ((swa != null || xop || a.flag("trailing-signature")) && !prof.sign()) {
            throw new Args.UsageException("--swa, --xop-expand and --trailing-signature need a signing profile");
        }
        // SwA signing without XOP expansion defaults to a classic SwA package (no xop:Include in the Body):
        // an MTOM Body signed with its literal xop:Include would not verify against the XOP infoset.
        String pkg = a.get("package", swa != null && !xop ? "swa" : "mtom");
        if (!pkg.equals("mtom") && !pkg.equals("swa")) {
            throw new Args.UsageException("--package: mtom or swa");
        }
        Attachments store = Mtom.load(a);
        boolean storeBytes = a.flag("store-bytes-in-attachment");
        if (storeBytes && !pkg.equals("mtom")) {
            throw new Args.UsageException("--store-bytes-in-attachment needs an MTOM package");
        }
        return new MimeOpts(store, pkg.equals("mtom"), swa, swaEncrypt, xop, a.flag("trailing-signature"), storeBytes,
            mimeOut);
    }

    private static String mode(Args a, String flag) throws Args.UsageException {
        String v = a.get(flag);
        if (v != null && !v.equals("content") && !v.equals("complete")) {
            throw new Args.UsageException("--" + flag + ": content or complete");
        }
        return v;
    }

    /**
     * WSS4J signature options: the attachment store, XOP expansion (WSSecSignatureBase inlines every
     * xop:Include of a signed element as base64 while digesting, then restores the original element),
     * and the "cid:Attachments" part, which signs every attachment with the SwA 1.1 §5.3 transform:
     * Attachment-Content-Signature-Transform ("Content") or Attachment-Complete ("Element").
     */
    void configure(WSSecSignature sig) {
        sig.setAttachmentCallbackHandler(store);
        sig.setExpandXopInclude(xopExpand);
        // CXF with MTOM on: the BST's certificate goes into a MIME part, the element keeps an
        // xop:Include (WSS4J BinarySecurity.setToken, AttachmentResultCallback).
        sig.setStoreBytesInAttachment(storeBytes);
        if (swa != null) {
            sig.getParts().add(new WSEncryptionPart("cid:Attachments", swa.equals("complete") ? "Element" : "Content"));
        }
    }

    /**
     * WSS4J encryption options for the Body/header encryption: with --store-bytes-in-attachment the
     * CipherValues of the EncryptedKey and of each EncryptedData go into MIME parts (xop:Include in
     * xenc:CipherValue), as CXF does with MTOM on.
     */
    void configure(WSSecEncrypt encr) {
        encr.setAttachmentCallbackHandler(store);
        encr.setStoreBytesInAttachment(storeBytes);
    }

    /**
     * Encrypts every attachment for the recipient (SwA 1.1 §5.4: Attachment-Content-Only or
     * Attachment-Complete EncryptedData in the Security header, CipherReference to the cid: URL).
     * WSS4J hands the ciphertext back through AttachmentResultCallback, which replaces the stored part.
     */
    void encryptAttachments(WSSecHeader secHeader, Crypto crypto, X509Certificate encCert, int keyId, String symAlg,
                            String ktAlg, String oaepDigest, String mgf) throws Exception {
        WSSecEncrypt encr = new WSSecEncrypt(secHeader);
        encr.setUseThisCert(encCert);
        encr.setKeyIdentifierType(keyId);
        encr.setSymmetricEncAlgorithm(symAlg);
        encr.setKeyEncAlgo(ktAlg);
        if (oaepDigest != null) {
            encr.setDigestAlgorithm(oaepDigest);
        }
        if (mgf != null) {
            encr.setMGFAlgorithm(mgf);
        }
        encr.setAttachmentCallbackHandler(store);
        encr.getParts().add(new WSEncryptionPart("cid:Attachments", swaEncrypt.equals("complete") ? "Element" : "Content"));
        SecretKey key = KeyUtils.getKeyGenerator(symAlg).generateKey();
        encr.build(crypto, key);
    }

    /** Writes the package (and the root part to --out if given); returns the JSON fields. */
    Map<String, Object> write(Document doc, String soap, String out, OutputStream stdout) throws Exception {
        List<Mime.Part> sigParts = trailing ? Mtom.detachSignatures(doc) : List.of();
        byte[] root = Xml.serialize(doc);
        if (out != null) {
            Xml.writeOutput(out, root, stdout);
        }
        List<Mime.Part> parts = new ArrayList<>(Mtom.parts(root, mtom, soap, store));
        parts.addAll(sigParts);
        String boundary = "uuid:" + UUID.randomUUID();
        byte[] pkg = Mime.write(boundary, parts);
        Xml.writeOutput(mimeOut, pkg, stdout);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("mimeOut", mimeOut);
        m.put("contentType", Mtom.packageType(mtom, soap, boundary));
        m.put("bytes", pkg.length);
        if (out != null) {
            m.put("out", out);
        }
        m.put("rootBytes", root.length);
        List<Object> atts = new ArrayList<>();
        for (Mime.Part p : parts.subList(1, parts.size())) {
            Map<String, Object> at = new LinkedHashMap<>();
            at.put("contentId", p.contentId());
            at.put("contentType", p.contentType());
            at.put("bytes", p.body().length);
            at.put("trailingSignature", sigParts.contains(p));
            atts.add(at);
        }
        m.put("parts", atts);
        if (xopExpand) {
            // Santuario writes the inlined base64 with MIME line breaks (76 columns, CRLF) unless
            // -Dorg.apache.xml.security.ignoreLineBreaks=true: that text is what WSS4J digests.
            m.put("xopBase64LineBreaks", !XMLUtils.ignoreLineBreaks());
        }
        return m;
    }
}
