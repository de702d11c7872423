package io.wssgw.interop.wss4j;

import java.io.OutputStream;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import javax.security.auth.callback.Callback;
import javax.security.auth.callback.CallbackHandler;
import javax.security.auth.callback.UnsupportedCallbackException;

import io.wssgw.interop.peer.Args;
import io.wssgw.interop.peer.Pem;
import io.wssgw.interop.peer.Result;

import org.apache.wss4j.common.crypto.Crypto;
import org.apache.wss4j.common.ext.WSPasswordCallback;
import org.apache.wss4j.common.ext.WSSecurityException;
import org.apache.wss4j.dom.WSConstants;
import org.apache.wss4j.dom.WSDataRef;
import org.apache.wss4j.dom.engine.WSSecurityEngine;
import org.apache.wss4j.dom.engine.WSSecurityEngineResult;
import org.apache.wss4j.dom.handler.RequestData;
import org.apache.wss4j.dom.handler.WSHandlerResult;
import org.apache.wss4j.dom.message.token.Timestamp;
import org.apache.wss4j.dom.message.token.UsernameToken;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/** The "verify" command: processes the Security header with WSSecurityEngine and reports what it found. */
final class Verify {
    private Verify() {
    }

    static final Set<String> VALUE_FLAGS = Set.of("in", "out", "ca", "cert", "key", "signer-cert", "user",
        "password", "actor", "ttl", "future-ttl", "require", "mime", "content-type", "expect-confirmation");
    static final Set<String> BOOL_FLAGS = Set.of("no-timestamp-check", "no-bsp", "allow-rsa15", "trailing-signature",
        "no-xop-expand");
    static final Set<String> REQUIREMENTS = Set.of("signature", "timestamp", "encryption", "username-token",
        "signed-body", "signed-timestamp", "encrypted-body");

    static final String WSSE = WSConstants.WSSE_NS;
    static final String DS = WSConstants.SIG_NS;

    static Result run(Args a, OutputStream stdout) throws Exception {
        String mimeFile = a.get("mime");
        String in = mimeFile == null ? a.require("in") : null;
        if (mimeFile != null && a.get("in") != null) {
            throw new Args.UsageException("--in and --mime exclude each other");
        }
        if (a.flag("trailing-signature") && mimeFile == null) {
            throw new Args.UsageException("--trailing-signature needs --mime FILE --content-type CT");
        }
        if ("-".equals(a.get("out"))) {
            throw new Args.UsageException("verify --out must name a file (stdout carries the JSON result)");
        }
        Set<String> require = new LinkedHashSet<>();
        for (String r : a.all("require")) {
            for (String s : r.split(",")) {
                s = s.trim();
                if (s.isEmpty()) {
                    continue;
                }
                if (!REQUIREMENTS.contains(s)) {
                    throw new Args.UsageException("--require: unknown item " + s + " (known: "
                        + String.join(", ", REQUIREMENTS) + ")");
                }
                require.add(s);
            }
        }

        Pem.CryptoBuilder cb = new Pem.CryptoBuilder();
        for (String f : a.all("ca")) {
            for (X509Certificate c : Pem.certs(f)) {
                cb.trust(c);
            }
        }
        String keyFile = a.get("key");
        String certFile = a.get("cert");
        if (keyFile != null) {
            if (certFile == null) {
                throw new Args.UsageException("--key needs --cert");
            }
            PrivateKey key = Pem.privateKey(keyFile);
            cb.key("self", key, Pem.certs(certFile));
        } else if (certFile != null) {
            cb.cert("self", Pem.cert(certFile));
        }
        int n = 0;
        for (String f : a.all("signer-cert")) {
            for (X509Certificate c : Pem.certs(f)) {
                cb.cert("signer" + (n++), c);
            }
        }
        Crypto crypto = cb.build();

        final String user = a.get("user");
        final String password = a.get("password");
        CallbackHandler handler = callbacks -> {
            for (Callback c : callbacks) {
                if (c instanceof WSPasswordCallback pc) {
                    switch (pc.getUsage()) {
                        case WSPasswordCallback.DECRYPT, WSPasswordCallback.SIGNATURE -> pc.setPassword(Pem.KEY_PASSWORD);
                        case WSPasswordCallback.USERNAME_TOKEN -> {
                            if (user != null && user.equals(pc.getIdentifier())) {
                                pc.setPassword(password);
                            }
                        }
                        default -> {
                        }
                    }
                } else {
                    throw new UnsupportedCallbackException(c);
                }
            }
        };

        RequestData rd = new RequestData();
        rd.setActor(a.get("actor"));
        rd.setCallbackHandler(handler);
        rd.setSigVerCrypto(crypto);
        rd.setDecCrypto(crypto);
        rd.setTimeStampTTL(a.intValue("ttl", 300));
        rd.setTimeStampFutureTTL(a.intValue("future-ttl", 60));
        if (a.flag("no-timestamp-check")) {
            rd.setTimeStampStrict(false);
            rd.setTimeStampTTL(Integer.MAX_VALUE);
            rd.setTimeStampFutureTTL(Integer.MAX_VALUE);
            rd.setUtTTL(Integer.MAX_VALUE);
            rd.setUtFutureTTL(Integer.MAX_VALUE);
        }
        rd.setDisableBSPEnforcement(a.flag("no-bsp"));
        rd.setAllowRSA15KeyTransportAlgorithm(a.flag("allow-rsa15"));

        Document doc;
        Attachments store = null;
        Map<String, List<String>> includedBy = null;
        List<String> trailingParts = null;
        if (mimeFile != null) {
            Mime.Package pkg = Mime.parse(Xml.readInput(mimeFile), a.require("content-type"));
            doc = Xml.parse(pkg.root().body());
            store = VerifyMime.store(pkg);
            if (a.flag("trailing-signature")) {
                trailingParts = Mtom.reassemble(doc, store);
            }
            includedBy = VerifyMime.includeOwners(doc);
            rd.setAttachmentCallbackHandler(store);
            // Digests over the XOP infoset (XOP 1.0 §3): WSS4J inlines each xop:Include of a signed
            // element as base64 before canonicalizing (SignatureProcessor, RequestData.expandXopInclude).
            rd.setExpandXopInclude(!a.flag("no-xop-expand"));
        } else {
            doc = Xml.parse(Xml.readInput(in));
        }
        String soap = Xml.soapVersion(doc);
        WSSecurityEngine engine = new WSSecurityEngine();
        WSHandlerResult hr;
        try {
            hr = engine.processSecurityHeader(doc, rd);
        } catch (WSSecurityException e) {
            return failure(e);
        }
        if (hr == null || hr.getResults().isEmpty()) {
            return Result.fail(1, "no WS-Security header for this actor (nothing verified)", "NO_SECURITY");
        }

        Map<String, Object> m = new LinkedHashMap<>();
        m.put("soapVersion", soap);
        List<String> actions = new ArrayList<>();
        Set<String> signedParts = new LinkedHashSet<>();
        Set<String> encryptedParts = new LinkedHashSet<>();
        List<Object> sigs = new ArrayList<>();
        List<Object> encs = new ArrayList<>();
        String signer = null;
        Map<String, Object> tsJson = null;
        Map<String, Object> utJson = null;
        List<Object> confirmations = new ArrayList<>();
        Set<String> signedIds = new LinkedHashSet<>();
        for (WSSecurityEngineResult r : hr.getResults()) {
            int action = (Integer) r.get(WSSecurityEngineResult.TAG_ACTION);
            actions.add(actionName(action));
            if (action == WSConstants.SIGN || action == WSConstants.UT_SIGN) {
                Map<String, Object> s = new LinkedHashMap<>();
                X509Certificate cert = (X509Certificate) r.get(WSSecurityEngineResult.TAG_X509_CERTIFICATE);
                if (cert != null) {
                    s.put("signer", cert.getSubjectX500Principal().getName());
                    s.put("issuer", cert.getIssuerX500Principal().getName());
                    if (signer == null) {
                        signer = cert.getSubjectX500Principal().getName();
                    }
                }
                Element sigElem = (Element) r.get(WSSecurityEngineResult.TAG_TOKEN_ELEMENT);
                s.put("keyReference", keyReference(sigElem));
                s.put("signatureMethod", r.get(WSSecurityEngineResult.TAG_SIGNATURE_METHOD));
                s.put("c14nMethod", r.get(WSSecurityEngineResult.TAG_CANONICALIZATION_METHOD));
                s.put("c14nPrefixList", prefixList(child(child(sigElem, DS, "SignedInfo"), DS, "CanonicalizationMethod")));
                List<Object> refs = new ArrayList<>();
                @SuppressWarnings("unchecked")
                List<WSDataRef> drs = (List<WSDataRef>) r.get(WSSecurityEngineResult.TAG_DATA_REF_URIS);
                if (drs != null) {
                    for (WSDataRef dr : drs) {
                        Map<String, Object> ref = new LinkedHashMap<>();
                        Element pe = dr.getProtectedElement();
                        if (pe != null) {
                            ref.put("element", clark(pe));
                            signedParts.add(pe.getLocalName());
                        }
                        ref.put("uri", dr.getWsuId());
                        if (dr.getWsuId() != null) {
                            signedIds.add(dr.getWsuId().replaceFirst("^#", ""));
                        }
                        ref.put("digestMethod", dr.getDigestAlgorithm());
                        ref.put("transforms", dr.getTransformAlgorithms());
                        ref.put("prefixList", referencePrefixList(sigElem, dr.getWsuId()));
                        refs.add(ref);
                    }
                }
                s.put("references", refs);
                sigs.add(s);
            } else if (action == WSConstants.ENCR) {
                Map<String, Object> e = new LinkedHashMap<>();
                Object kt = r.get(WSSecurityEngineResult.TAG_ENCRYPTED_KEY_TRANSPORT_METHOD);
                if (kt != null) {
                    e.put("keyTransport", kt);
                    Element ek = (Element) r.get(WSSecurityEngineResult.TAG_TOKEN_ELEMENT);
                    e.put("keyReference", keyReference(ek));
                    Element em = child(ek, WSConstants.ENC_NS, "EncryptionMethod");
                    Element dm = child(em, DS, "DigestMethod");
                    if (dm != null) {
                        e.put("oaepDigest", dm.getAttributeNS(null, "Algorithm"));
                    }
                    Element mgf = child(em, WSConstants.ENC11_NS, "MGF");
                    if (mgf != null) {
                        e.put("mgf", mgf.getAttributeNS(null, "Algorithm"));
                    }
                    X509Certificate[] certs = (X509Certificate[]) r.get(WSSecurityEngineResult.TAG_X509_CERTIFICATES);
                    if (certs != null && certs.length > 0 && certs[0] != null) {
                        e.put("recipient", certs[0].getSubjectX500Principal().getName());
                    }
                }
                List<Object> parts = new ArrayList<>();
                @SuppressWarnings("unchecked")
                List<WSDataRef> drs = (List<WSDataRef>) r.get(WSSecurityEngineResult.TAG_DATA_REF_URIS);
                if (drs != null) {
                    for (WSDataRef dr : drs) {
                        Map<String, Object> p = new LinkedHashMap<>();
                        Element pe = dr.getProtectedElement();
                        if (pe != null) {
                            p.put("element", clark(pe));
                            encryptedParts.add(pe.getLocalName());
                        }
                        p.put("id", dr.getWsuId());
                        p.put("algorithm", dr.getAlgorithm());
                        p.put("content", dr.isContent());
                        parts.add(p);
                    }
                }
                e.put("parts", parts);
                encs.add(e);
            } else if (action == WSConstants.TS) {
                Timestamp ts = (Timestamp) r.get(WSSecurityEngineResult.TAG_TIMESTAMP);
                tsJson = new LinkedHashMap<>();
                tsJson.put("created", ts.getCreated() == null ? null : ts.getCreated().toString());
                tsJson.put("expires", ts.getExpires() == null ? null : ts.getExpires().toString());
            } else if (action == WSConstants.SC) {
                confirmations.add(r);
            } else if (action == WSConstants.UT || action == WSConstants.UT_NOPASSWORD) {
                UsernameToken ut = (UsernameToken) r.get(WSSecurityEngineResult.TAG_USERNAME_TOKEN);
                utJson = new LinkedHashMap<>();
                utJson.put("user", ut.getName());
                utJson.put("passwordType", ut.getPasswordType());
                utJson.put("nonce", ut.getNonce() != null);
                utJson.put("created", ut.getCreated());
            }
        }
        // WSS4J reports results in reverse header order; present them in header order.
        java.util.Collections.reverse(actions);
        m.put("actions", actions);
        m.put("signer", signer);
        m.put("signedParts", new ArrayList<>(signedParts));
        m.put("encryptedParts", new ArrayList<>(encryptedParts));
        m.put("signatures", sigs);
        m.put("encryption", encs);
        m.put("timestamp", tsJson);
        m.put("usernameToken", utJson);
        List<Object> scJson = VerifyMime.confirmations(confirmations, signedIds);
        if (!scJson.isEmpty() || a.get("expect-confirmation") != null) {
            m.put("signatureConfirmations", scJson);
        }
        if (store != null) {
            m.put("attachments", VerifyMime.attachmentsJson(store, signedIds, includedBy));
            if (trailingParts != null) {
                m.put("trailingSignatureParts", trailingParts);
            }
        }

        List<String> missing = new ArrayList<>();
        for (String req : require) {
            boolean ok = switch (req) {
                case "signature" -> !sigs.isEmpty();
                case "timestamp" -> tsJson != null;
                case "encryption" -> !encs.isEmpty();
                case "username-token" -> utJson != null;
                case "signed-body" -> signedParts.contains("Body");
                case "signed-timestamp" -> signedParts.contains("Timestamp");
                case "encrypted-body" -> encryptedParts.contains("Body");
                default -> false;
            };
            if (!ok) {
                missing.add(req);
            }
        }
        String expect = a.get("expect-confirmation");
        if (expect != null && !VerifyMime.confirmed(scJson, expect)) {
            missing.add("signature-confirmation=" + expect);
        }
        if (!missing.isEmpty()) {
            Result f = Result.fail(1, "requirement(s) not met: " + String.join(",", missing), "REQUIREMENT");
            f.json.putAll(m);
            f.json.put("ok", false);
            return f;
        }
        if (a.get("out") != null) {
            Xml.writeOutput(a.get("out"), Xml.serialize(doc), stdout);
        }
        return Result.ok(m);
    }

    static Result failure(WSSecurityException e) {
        StringBuilder msg = new StringBuilder(String.valueOf(e.getMessage()));
        Throwable c = e.getCause();
        Set<Throwable> seen = new java.util.HashSet<>();
        while (c != null && seen.add(c)) {
            if (c.getMessage() != null && !msg.toString().contains(c.getMessage())) {
                msg.append(": ").append(c.getMessage());
            }
            c = c.getCause();
        }
        Result r = Result.fail(1, msg.toString(), e.getErrorCode() == null ? "FAILURE" : e.getErrorCode().name());
        if (e.getMsgID() != null && !r.json.get("errorCode").equals(e.getMsgID())) {
            r.json.put("msgId", e.getMsgID()); // WSS4J's message key, often more specific than the text
        }
        return r;
    }

    static String actionName(int action) {
        return switch (action) {
            case WSConstants.SIGN -> "Signature";
            case WSConstants.UT_SIGN -> "UsernameTokenSignature";
            case WSConstants.ENCR -> "Encrypt";
            case WSConstants.TS -> "Timestamp";
            case WSConstants.UT -> "UsernameToken";
            case WSConstants.UT_NOPASSWORD -> "UsernameTokenNoPassword";
            case WSConstants.BST -> "BinarySecurityToken";
            case WSConstants.SC -> "SignatureConfirmation";
            case WSConstants.DKT -> "DerivedKeyToken";
            case WSConstants.SCT -> "SecurityContextToken";
            case WSConstants.ST_SIGNED, WSConstants.ST_UNSIGNED -> "SAMLToken";
            default -> "action-" + action;
        };
    }

    static String clark(Element e) {
        String ns = e.getNamespaceURI();
        return ns == null || ns.isEmpty() ? e.getLocalName() : "{" + ns + "}" + e.getLocalName();
    }

    static Element child(Element parent, String ns, String local) {
        if (parent == null) {
            return null;
        }
        for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element c && local.equals(c.getLocalName()) && ns.equals(c.getNamespaceURI())) {
                return c;
            }
        }
        return null;
    }

    /** PrefixList of an ec:InclusiveNamespaces child of a CanonicalizationMethod or Transform, or null. */
    static String prefixList(Element method) {
        Element inc = child(method, WSConstants.C14N_EXCL_OMIT_COMMENTS, "InclusiveNamespaces");
        return inc == null ? null : inc.getAttributeNS(null, "PrefixList");
    }

    static String referencePrefixList(Element sigElem, String uri) {
        Element si = child(sigElem, DS, "SignedInfo");
        if (si == null || uri == null) {
            return null;
        }
        for (Node n = si.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element r && "Reference".equals(r.getLocalName()) && DS.equals(r.getNamespaceURI())
                && uri.replaceFirst("^#", "").equals(r.getAttributeNS(null, "URI").replaceFirst("^#", ""))) {
                Element tr = child(r, DS, "Transforms");
                if (tr == null) {
                    return null;
                }
                for (Node t = tr.getFirstChild(); t != null; t = t.getNextSibling()) {
                    if (t instanceof Element te) {
                        String pl = prefixList(te);
                        if (pl != null) {
                            return pl;
                        }
                    }
                }
                return null;
            }
        }
        return null;
    }

    /** The key reference kind in a ds:KeyInfo, named as the sign command's --key-identifier values. */
    static String keyReference(Element owner) {
        Element ki = child(owner, DS, "KeyInfo");
        Element str = child(ki, WSSE, "SecurityTokenReference");
        if (str == null) {
            return ki == null ? null : "keyinfo-without-str";
        }
        for (Node n = str.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (!(n instanceof Element c)) {
                continue;
            }
            if ("Reference".equals(c.getLocalName()) && WSSE.equals(c.getNamespaceURI())) {
                String vt = c.getAttributeNS(null, "ValueType");
                if (vt.endsWith("#X509v3") || vt.endsWith("#X509PKIPathv1") || vt.endsWith("#PKCS7")) {
                    return "bst";
                }
                return "reference" + (vt.isEmpty() ? "" : ":" + vt.substring(vt.lastIndexOf('#') + 1));
            }
            if ("X509Data".equals(c.getLocalName()) && DS.equals(c.getNamespaceURI())) {
                return child(c, DS, "X509IssuerSerial") != null ? "issuer-serial" : "x509data";
            }
            if ("KeyIdentifier".equals(c.getLocalName()) && WSSE.equals(c.getNamespaceURI())) {
                String vt = c.getAttributeNS(null, "ValueType");
                if (vt.endsWith("#X509SubjectKeyIdentifier")) {
                    return "ski";
                }
                if (vt.endsWith("#ThumbprintSHA1")) {
                    return "thumbprint";
                }
                if (vt.endsWith("#X509v3")) {
                    return "x509";
                }
                if (vt.endsWith("#EncryptedKeySHA1")) {
                    return "encrypted-key-sha1";
                }
                return "key-identifier:" + vt;
            }
        }
        return "unknown";
    }
}
