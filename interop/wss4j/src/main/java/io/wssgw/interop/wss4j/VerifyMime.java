package io.wssgw.interop.wss4j;

import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.wss4j.dom.WSConstants;
import org.apache.wss4j.dom.engine.WSSecurityEngineResult;
import org.apache.wss4j.dom.message.token.SignatureConfirmation;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

/** verify's MIME-package and SignatureConfirmation helpers. */
final class VerifyMime {
    private VerifyMime() {
    }

    /**
     * The package's non-root parts as WSS4J attachments, keyed by Content-ID (required on each), in a
     * store that removes what WSS4J asks to remove, as CXF's receiver does.
     */
    static Attachments store(Mime.Package pkg) {
        Attachments store = new Attachments(true);
        for (Mime.Part p : pkg.attachments()) {
            String id = p.contentId();
            if (id == null || id.isEmpty()) {
                throw new IllegalArgumentException("MIME part without Content-ID");
            }
            store.add(new Attachments.Item(id, p.contentType(), new LinkedHashMap<>(p.headers()), p.body()));
        }
        return store;
    }

    /**
     * One entry per attachment left in the store after processing: whether a verified Reference
     * named it by cid: URL, whether WSS4J decrypted it (AttachmentResultCallback), its size and SHA-256.
     */
    static List<Object> attachmentsJson(Attachments store, Set<String> signedIds,
                                        Map<String, List<String>> includedBy) throws Exception {
        List<Object> out = new ArrayList<>();
        for (Attachments.Item it : store.items()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("contentId", it.id);
            m.put("contentType", it.mimeType);
            m.put("bytes", it.bytes.length);
            m.put("sha256", HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(it.bytes)));
            boolean swa = signedIds.contains("cid:" + it.id) || signedIds.contains("cid:" + Mtom.cidEncode(it.id));
            List<String> owners = includedBy.getOrDefault(it.id, List.of());
            boolean xop = owners.stream().anyMatch(signedIds::contains);
            m.put("signed", swa || xop);
            m.put("signedBy", swa && xop ? "swa+xop" : swa ? "swa" : xop ? "xop" : null);
            m.put("xopIncluded", includedBy.containsKey(it.id));
            m.put("decrypted", it.replaced);
            out.add(m);
        }
        return out;
    }

    /**
     * For each xop:Include in the document (before WSS4J inlines them): the Content-ID it names and
     * the Id / wsu:Id values of its ancestors, so that a signed ancestor marks the attachment as
     * covered through the XOP infoset.
     */
    static Map<String, List<String>> includeOwners(Document doc) {
        Map<String, List<String>> out = new LinkedHashMap<>();
        NodeList incs = doc.getElementsByTagNameNS(Mtom.XOP_NS, "Include");
        for (int i = 0; i < incs.getLength(); i++) {
            Element inc = (Element) incs.item(i);
            List<String> ids = new ArrayList<>();
            for (Node n = inc.getParentNode(); n instanceof Element e; n = n.getParentNode()) {
                for (String id : new String[] {e.getAttributeNS(WSConstants.WSU_NS, "Id"), e.getAttributeNS(null, "Id")}) {
                    if (!id.isEmpty()) {
                        ids.add(id);
                    }
                }
            }
            out.computeIfAbsent(Mtom.cidDecode(inc.getAttributeNS(null, "href")), k -> new ArrayList<>()).addAll(ids);
        }
        return out;
    }

    /** SignatureConfirmation results: Value (base64, null when absent), wsu:Id, and whether it was signed. */
    static List<Object> confirmations(List<Object> results, Set<String> signedIds) {
        List<Object> out = new ArrayList<>();
        for (Object o : results) {
            WSSecurityEngineResult r = (WSSecurityEngineResult) o;
            SignatureConfirmation sc = (SignatureConfirmation) r.get(WSSecurityEngineResult.TAG_SIGNATURE_CONFIRMATION);
            Map<String, Object> m = new LinkedHashMap<>();
            byte[] v = sc.getSignatureValue();
            m.put("value", v == null ? null : Base64.getEncoder().encodeToString(v));
            m.put("id", sc.getID());
            m.put("signed", sc.getID() != null && signedIds.contains(sc.getID()));
            out.add(m);
        }
        return out;
    }

    /**
     * WSS 1.1 §8.5: the response confirms the request's SignatureValue, and the confirmation must be
     * covered by the response signature (else anyone could append one). Compares decoded bytes, so
     * base64 line breaks do not matter.
     */
    static boolean confirmed(List<Object> scJson, String expect) {
        byte[] want = Base64.getMimeDecoder().decode(expect);
        for (Object o : scJson) {
            @SuppressWarnings("unchecked")
            Map<String, Object> m = (Map<String, Object>) o;
            Object v = m.get("value");
            if (v != null && Boolean.TRUE.equals(m.get("signed"))
                && Arrays.equals(Base64.getDecoder().decode((String) v), want)) {
                return true;
            }
        }
        return false;
    }
}
