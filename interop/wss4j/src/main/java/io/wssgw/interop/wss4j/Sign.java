package io.wssgw.interop.wss4j;

import java.io.OutputStream;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import javax.crypto.SecretKey;

import io.wssgw.interop.peer.Args;
import io.wssgw.interop.peer.Pem;
import io.wssgw.interop.peer.Result;

import org.apache.wss4j.common.WSEncryptionPart;
import org.apache.wss4j.common.crypto.Crypto;
import org.apache.wss4j.common.util.KeyUtils;
import org.apache.wss4j.common.util.WSTimeSource;
import org.apache.wss4j.dom.WSConstants;
import org.apache.wss4j.dom.message.WSSecEncrypt;
import org.apache.wss4j.dom.message.WSSecEncryptedKey;
import org.apache.wss4j.dom.message.WSSecHeader;
import org.apache.wss4j.dom.message.WSSecSignature;
import org.apache.wss4j.dom.message.WSSecSignatureConfirmation;
import org.apache.wss4j.dom.message.WSSecTimestamp;
import org.apache.wss4j.dom.message.WSSecUsernameToken;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/** The "sign" command: secures a plain SOAP envelope according to a named profile. */
final class Sign {
    private Sign() {
    }

    static final Set<String> VALUE_FLAGS = Set.of("profile", "in", "out", "key", "cert", "chain", "encrypt-cert",
        "user", "password", "ttl", "signature-algorithm", "digest-algorithm", "c14n", "key-identifier",
        "encrypt-key-identifier", "symmetric-algorithm", "key-transport", "oaep-digest", "mgf", "actor", "now",
        "sign-header", "encrypt-header", "username-token", "attachment", "attachment-type", "content-id", "mime-out",
        "swa", "swa-encrypt", "package", "confirm-signature");
    static final Set<String> BOOL_FLAGS = Set.of("no-timestamp", "no-inclusive-prefixes", "pkipath",
        "sign-encrypted-key", "include-bst-in-signature", "str-transform", "x509-signature", "xop-expand",
        "trailing-signature", "store-bytes-in-attachment");

    /** What a profile does; flags may override the key identifier. */
    record Profile(String name, boolean sign, boolean encrypt, boolean encryptFirst, String passwordType,
                   int keyIdentifier, String description, int symmetricRef) {
        Profile(String name, boolean sign, boolean encrypt, boolean encryptFirst, String passwordType,
                int keyIdentifier, String description) {
            this(name, sign, encrypt, encryptFirst, passwordType, keyIdentifier, description, 0);
        }

        /** A symmetric-binding profile: HMAC signature and encryption with one EncryptedKey's key. */
        boolean symmetric() {
            return symmetricRef != 0;
        }
    }

    static final Map<String, Profile> PROFILES = new LinkedHashMap<>();

    static {
        add(new Profile("sign-bst", true, false, false, null, WSConstants.BST_DIRECT_REFERENCE,
            "Timestamp + signature over Body and Timestamp, key by BST direct reference"));
        add(new Profile("sign-issuerserial", true, false, false, null, WSConstants.ISSUER_SERIAL,
            "as sign-bst, key by X509IssuerSerial (no BST)"));
        add(new Profile("sign-ski", true, false, false, null, WSConstants.SKI_KEY_IDENTIFIER,
            "as sign-bst, key by SubjectKeyIdentifier KeyIdentifier"));
        add(new Profile("sign-thumbprint", true, false, false, null, WSConstants.THUMBPRINT_IDENTIFIER,
            "as sign-bst, key by ThumbprintSHA1 KeyIdentifier"));
        add(new Profile("sign-x509", true, false, false, null, WSConstants.X509_KEY_IDENTIFIER,
            "as sign-bst, key by X509v3 KeyIdentifier (certificate embedded in the STR)"));
        add(new Profile("sign-encrypt", true, true, false, null, WSConstants.BST_DIRECT_REFERENCE,
            "sign-bst, then Body content encrypted (AES-256-GCM, RSA-OAEP, recipient by IssuerSerial)"));
        add(new Profile("encrypt-sign", true, true, true, null, WSConstants.BST_DIRECT_REFERENCE,
            "Body content encrypted first, then Body + Timestamp signed (BST)"));
        add(new Profile("encrypt", false, true, false, null, WSConstants.BST_DIRECT_REFERENCE,
            "Timestamp + Body content encrypted, no signature"));
        add(new Profile("timestamp", false, false, false, null, 0, "Timestamp only"));
        add(new Profile("username-digest", false, false, false, WSConstants.PASSWORD_DIGEST, 0,
            "UsernameToken PasswordDigest with Nonce and Created, plus Timestamp"));
        add(new Profile("username-text", false, false, false, WSConstants.PASSWORD_TEXT, 0,
            "UsernameToken PasswordText with Nonce and Created, plus Timestamp"));
        add(new Profile("symmetric", false, true, false, null, 0,
            "EncryptedKey for --encrypt-cert; HMAC-SHA256 signature over Body + Timestamp keyed by it (STR "
                + "Reference to the EncryptedKey), then Body content encrypted with the same key",
            WSConstants.CUSTOM_SYMM_SIGNING));
        add(new Profile("symmetric-sha1", false, true, false, null, 0,
            "as symmetric, the key referenced by EncryptedKeySHA1 KeyIdentifiers",
            WSConstants.ENCRYPTED_KEY_SHA1_IDENTIFIER));
    }

    private static void add(Profile p) {
        PROFILES.put(p.name(), p);
    }

    static Result run(Args a, OutputStream stdout) throws Exception {
        String profName = a.require("profile");
        Profile prof = PROFILES.get(profName);
        if (prof == null) {
            throw new Args.UsageException("unknown --profile " + profName + " (known: "
                + String.join(", ", PROFILES.keySet()) + ")");
        }
        String in = a.require("in");
        MimeOpts mo = MimeOpts.of(a, prof);
        // With --mime-out the package goes to that file; the root part alone only if --out asks for it.
        String out = a.get("out", mo == null ? "-" : null);
        int ttl = a.intValue("ttl", 300);
        String nowFlag = a.get("now");
        WSTimeSource clock = null;
        if (nowFlag != null) {
            Instant fixed;
            try {
                fixed = Instant.parse(nowFlag);
            } catch (Exception e) {
                throw new Args.UsageException("--now: not an RFC 3339 UTC instant (2026-01-02T03:04:05Z): " + nowFlag);
            }
            clock = () -> fixed;
        }

        // Keys.
        Pem.CryptoBuilder cb = new Pem.CryptoBuilder();
        PrivateKey key = null;
        boolean x509Sign = prof.sign() || (prof.symmetric() && a.flag("x509-signature"));
        if (x509Sign) {
            key = Pem.privateKey(a.require("key"));
            List<X509Certificate> chain = new ArrayList<>(Pem.certs(a.require("cert")));
            for (String c : a.all("chain")) {
                chain.addAll(Pem.certs(c));
            }
            cb.key("signer", key, chain);
        }
        X509Certificate encCert = null;
        if (prof.encrypt() || (mo != null && mo.swaEncrypt() != null)) {
            encCert = Pem.cert(a.require("encrypt-cert"));
            if (!"RSA".equals(encCert.getPublicKey().getAlgorithm())) {
                throw new Args.UsageException("--encrypt-cert: only RSA key transport is supported, got "
                    + encCert.getPublicKey().getAlgorithm());
            }
            cb.cert("recipient", encCert);
        }
        Crypto crypto = cb.build();

        String defSig = key != null && "EC".equals(key.getAlgorithm()) ? WSConstants.ECDSA_SHA256 : WSConstants.RSA_SHA256;
        String sigAlg = Algos.uri(Algos.SIGNATURE, "signature-algorithm", a.get("signature-algorithm"));
        String digAlg = Algos.uri(Algos.DIGEST, "digest-algorithm", a.get("digest-algorithm", "sha256"));
        String c14n = Algos.uri(Algos.C14N, "c14n", a.get("c14n", "exc-c14n"));
        String symAlg = Algos.uri(Algos.SYMMETRIC, "symmetric-algorithm", a.get("symmetric-algorithm", "aes256-gcm"));
        String ktAlg = Algos.uri(Algos.KEY_TRANSPORT, "key-transport", a.get("key-transport", "rsa-oaep-mgf1p"));
        String oaepDigest = Algos.uri(Algos.DIGEST, "oaep-digest", a.get("oaep-digest"));
        String mgf = Algos.uri(Algos.MGF, "mgf", a.get("mgf"));
        int sigKeyId = Algos.keyIdentifier("key-identifier", a.get("key-identifier"), prof.keyIdentifier());
        int encKeyId = Algos.keyIdentifier("encrypt-key-identifier", a.get("encrypt-key-identifier"),
            WSConstants.ISSUER_SERIAL);
        String utType = prof.passwordType();
        if (a.get("username-token") != null) {
            utType = switch (a.get("username-token")) {
                case "digest" -> WSConstants.PASSWORD_DIGEST;
                case "text" -> WSConstants.PASSWORD_TEXT;
                default -> throw new Args.UsageException("--username-token: digest or text");
            };
        }
        if (utType != null) {
            a.require("user");
            if (a.get("password") == null) {
                throw new Args.UsageException("missing --password");
            }
        }

        Document doc = Xml.parse(Xml.readInput(in));
        String soap = Xml.soapVersion(doc);
        String soapNs = doc.getDocumentElement().getNamespaceURI();
        if (mo != null && mo.mtom()) {
            Mtom.insertIncludes(doc, mo.store());
        }

        WSSecHeader secHeader = a.get("actor") == null ? new WSSecHeader(doc) : new WSSecHeader(a.get("actor"), doc);
        secHeader.insertSecurityHeader();

        // Elements are prepended to the Security header: the first built ends up last.
        WSSecTimestamp ts = null;
        if (!a.flag("no-timestamp")) {
            ts = new WSSecTimestamp(secHeader);
            ts.setTimeToLive(ttl);
            if (clock != null) {
                ts.setWsTimeSource(clock);
            }
            ts.build();
        }

        if (utType != null) {
            WSSecUsernameToken ut = new WSSecUsernameToken(secHeader);
            ut.setPasswordType(utType);
            ut.setUserInfo(a.get("user"), a.get("password"));
            ut.addNonce();
            ut.addCreated();
            if (clock != null) {
                ut.setWsTimeSource(clock);
            }
            ut.build();
        }

        List<WSEncryptionPart> signHeaders = parts(a.all("sign-header"), "");
        for (String v : a.all("confirm-signature")) {
            // A response's wsse11:SignatureConfirmation (WSS 1.1 §8.5) for a request SignatureValue
            // (base64; "" makes one without Value). Signed along with the Body.
            WSSecSignatureConfirmation sc = new WSSecSignatureConfirmation(secHeader);
            sc.build(v.isEmpty() ? null : java.util.Base64.getMimeDecoder().decode(v));
            signHeaders.add(new WSEncryptionPart(sc.getId()));
        }
        List<WSEncryptionPart> encryptHeaders = parts(a.all("encrypt-header"), "Header");
        if (prof.symmetric()) {
            symmetric(a, prof, secHeader, crypto, encCert, encKeyId, sigAlg, digAlg, c14n, symAlg, ktAlg, oaepDigest,
                mgf, soapNs, ts, signHeaders, encryptHeaders, x509Sign);
            return written(prof, doc, soap, out, stdout, mo);
        }
        WSSecEncrypt encr = null;
        if (prof.encrypt() && (prof.encryptFirst() || !prof.sign())) {
            encr = encrypt(secHeader, crypto, encCert, encKeyId, symAlg, ktAlg, oaepDigest, mgf, soapNs, encryptHeaders, mo);
        }
        if (prof.sign()) {
            WSSecSignature sig = new WSSecSignature(secHeader);
            sig.setUserInfo("signer", Pem.KEY_PASSWORD);
            sig.setKeyIdentifierType(sigKeyId);
            sig.setSignatureAlgorithm(sigAlg != null ? sigAlg : defSig);
            sig.setDigestAlgo(digAlg);
            sig.setSigCanonicalization(c14n);
            sig.setAddInclusivePrefixes(!a.flag("no-inclusive-prefixes"));
            sig.setUseSingleCertificate(!a.flag("pkipath"));
            sig.getParts().add(new WSEncryptionPart(WSConstants.ELEM_BODY, soapNs, ""));
            if (ts != null) {
                sig.getParts().add(new WSEncryptionPart(ts.getId()));
            }
            sig.getParts().addAll(signHeaders);
            if (mo != null) {
                mo.configure(sig);
            }
            if (a.flag("str-transform")) {
                if (a.flag("include-bst-in-signature")) {
                    // The STR of the KeyInfo only exists once build() marshals it.
                    throw new Args.UsageException("--str-transform and --include-bst-in-signature do not combine");
                }
                // WSS4J's "STRTransform" part: a Reference to the KeyInfo's SecurityTokenReference
                // with the STR-Transform (WSS 1.1 §8.3), which digests the token it names.
                sig.getParts().add(new WSEncryptionPart("STRTransform", "", "Element"));
            }
            if (encr != null && a.flag("sign-encrypted-key")) {
                sig.getParts().add(new WSEncryptionPart(encr.getId()));
            }
            if (a.flag("include-bst-in-signature")) {
                // The BST must be in the document before it is digested: insert it first, then put
                // the Signature right after it (the layout build() produces).
                sig.prepare(crypto);
                Element first = firstChildElement(secHeader.getSecurityHeaderElement());
                sig.prependBSTElementToHeader();
                if (sig.getBSTTokenId() != null) {
                    sig.getParts().add(new WSEncryptionPart(sig.getBSTTokenId()));
                }
                List<javax.xml.crypto.dsig.Reference> refs = sig.addReferencesToSign(sig.getParts());
                sig.computeSignature(refs, first != null, first);
            } else {
                sig.build(crypto);
            }
        }
        if (prof.encrypt() && prof.sign() && !prof.encryptFirst()) {
            encr = encrypt(secHeader, crypto, encCert, encKeyId, symAlg, ktAlg, oaepDigest, mgf, soapNs, encryptHeaders, mo);
        }
        if (mo != null && mo.swaEncrypt() != null) {
            mo.encryptAttachments(secHeader, crypto, encCert, encKeyId, symAlg, ktAlg, oaepDigest, mgf);
        }
        return written(prof, doc, soap, out, stdout, mo);
    }

    private static Result written(Profile prof, Document doc, String soap, String out, OutputStream stdout,
                                  MimeOpts mo) throws Exception {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("profile", prof.name());
        m.put("soapVersion", soap);
        if (mo != null) {
            m.putAll(mo.write(doc, soap, out, stdout));
            return Result.ok(m);
        }
        byte[] data = Xml.serialize(doc);
        Xml.writeOutput(out, data, stdout);
        m.put("out", out);
        m.put("bytes", data.length);
        return Result.ok(m);
    }

    private static Element firstChildElement(Element parent) {
        for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element e) {
                return e;
            }
        }
        return null;
    }

    /** "{ns}local" flag values as encryption/signature parts with the given modifier. */
    private static List<WSEncryptionPart> parts(List<String> qnames, String modifier) throws Args.UsageException {
        List<WSEncryptionPart> out = new ArrayList<>();
        for (String q : qnames) {
            int close = q.indexOf('}');
            if (!q.startsWith("{") || close < 0 || close == q.length() - 1) {
                throw new Args.UsageException("header part: want {namespace}local, got " + q);
            }
            out.add(new WSEncryptionPart(q.substring(close + 1), q.substring(1, close), modifier));
        }
        return out;
    }

    /**
     * The symmetric binding as CXF builds it: one EncryptedKey for the recipient, an HMAC signature over
     * Body, Timestamp and the --sign-header parts keyed by that EncryptedKey's key (KeyInfo: STR Reference
     * to the EncryptedKey, or an EncryptedKeySHA1 KeyIdentifier), then the Body content (and any
     * --encrypt-header parts) encrypted with the same key, each EncryptedData naming the key the same way,
     * under a standalone ReferenceList. --x509-signature adds an asymmetric signature (BST) over the same
     * parts. Header order: EncryptedKey, ReferenceList, [X.509 Signature, BST], HMAC Signature, Timestamp.
     */
    private static void symmetric(Args a, Profile prof, WSSecHeader secHeader, Crypto crypto, X509Certificate encCert,
                                  int encKeyId, String sigAlg, String digAlg, String c14n, String symAlg, String ktAlg,
                                  String oaepDigest, String mgf, String soapNs, WSSecTimestamp ts,
                                  List<WSEncryptionPart> signHeaders, List<WSEncryptionPart> encryptHeaders,
                                  boolean x509Sign) throws Exception {
        SecretKey symKey = KeyUtils.getKeyGenerator(symAlg).generateKey();
        WSSecEncryptedKey ek = new WSSecEncryptedKey(secHeader);
        ek.setUseThisCert(encCert);
        ek.setKeyIdentifierType(encKeyId);
        ek.setKeyEncAlgo(ktAlg);
        if (oaepDigest != null) {
            ek.setDigestAlgorithm(oaepDigest);
        }
        if (mgf != null) {
            ek.setMGFAlgorithm(mgf);
        }
        ek.prepare(crypto, symKey);
        boolean sha1 = prof.symmetricRef() == WSConstants.ENCRYPTED_KEY_SHA1_IDENTIFIER;

        WSSecSignature hs = new WSSecSignature(secHeader);
        if (sha1) {
            hs.setKeyIdentifierType(WSConstants.ENCRYPTED_KEY_SHA1_IDENTIFIER);
            hs.setEncrKeySha1value(ek.getEncryptedKeySHA1());
        } else {
            hs.setKeyIdentifierType(WSConstants.CUSTOM_SYMM_SIGNING);
            hs.setCustomTokenId(ek.getId());
            hs.setCustomTokenValueType(WSConstants.WSS_ENC_KEY_VALUE_TYPE);
        }
        hs.setSecretKey(symKey.getEncoded());
        hs.setSignatureAlgorithm(sigAlg != null ? sigAlg : WSConstants.HMAC_SHA256);
        hs.setDigestAlgo(digAlg);
        hs.setSigCanonicalization(c14n);
        hs.setAddInclusivePrefixes(!a.flag("no-inclusive-prefixes"));
        hs.getParts().add(new WSEncryptionPart(WSConstants.ELEM_BODY, soapNs, ""));
        if (ts != null) {
            hs.getParts().add(new WSEncryptionPart(ts.getId()));
        }
        hs.getParts().addAll(signHeaders);
        hs.build(crypto);

        if (x509Sign) {
            WSSecSignature xs = new WSSecSignature(secHeader);
            xs.setUserInfo("signer", Pem.KEY_PASSWORD);
            xs.setKeyIdentifierType(WSConstants.BST_DIRECT_REFERENCE);
            xs.setSignatureAlgorithm(WSConstants.RSA_SHA256);
            xs.setDigestAlgo(digAlg);
            xs.setSigCanonicalization(c14n);
            xs.getParts().add(new WSEncryptionPart(WSConstants.ELEM_BODY, soapNs, ""));
            if (ts != null) {
                xs.getParts().add(new WSEncryptionPart(ts.getId()));
            }
            xs.getParts().addAll(signHeaders);
            xs.build(crypto);
        }

        WSSecEncrypt en = new WSSecEncrypt(secHeader);
        en.setEncryptSymmKey(false);
        en.setEncKeyId(ek.getId());
        en.setSymmetricEncAlgorithm(symAlg);
        if (sha1) {
            en.setKeyIdentifierType(WSConstants.ENCRYPTED_KEY_SHA1_IDENTIFIER);
            en.setCustomReferenceValue(ek.getEncryptedKeySHA1());
        } else {
            en.setKeyIdentifierType(WSConstants.CUSTOM_SYMM_SIGNING);
            en.setCustomReferenceValue(WSConstants.WSS_ENC_KEY_VALUE_TYPE);
        }
        en.getParts().add(new WSEncryptionPart(WSConstants.ELEM_BODY, soapNs, "Content"));
        en.getParts().addAll(encryptHeaders);
        en.build(crypto, symKey);
        ek.prependToHeader();
    }

    private static WSSecEncrypt encrypt(WSSecHeader secHeader, Crypto crypto, X509Certificate encCert, int keyId,
                                        String symAlg, String ktAlg, String oaepDigest, String mgf, String soapNs,
                                        List<WSEncryptionPart> headers, MimeOpts mo)
        throws Exception {
        WSSecEncrypt encr = new WSSecEncrypt(secHeader);
        if (mo != null) {
            mo.configure(encr);
        }
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
        encr.getParts().add(new WSEncryptionPart(WSConstants.ELEM_BODY, soapNs, "Content"));
        // Header blocks with the "Header" modifier: WSS4J wraps each EncryptedData in a
        // wsse11:EncryptedHeader (WSS 1.1 §9.3).
        encr.getParts().addAll(headers);
        SecretKey symKey = KeyUtils.getKeyGenerator(symAlg).generateKey();
        encr.build(crypto, symKey);
        return encr;
    }
}
