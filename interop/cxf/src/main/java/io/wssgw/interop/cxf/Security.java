package io.wssgw.interop.cxf;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import javax.security.auth.callback.CallbackHandler;

import io.wssgw.interop.peer.Args;
import io.wssgw.interop.peer.Pem;

import org.apache.wss4j.common.ConfigurationConstants;
import org.apache.wss4j.common.crypto.Merlin;
import org.apache.wss4j.common.ext.WSPasswordCallback;

/**
 * The WSS4J interceptor configuration both roles use: CXF's WSS4JOutInterceptor and
 * WSS4JInInterceptor with nothing set but what a partner must set (actions, who signs, who is
 * encrypted for, the key reference, where the keys are). Algorithms, MTOM handling
 * (storeBytesInAttachment, expandXOPInclude) and checks are CXF's and WSS4J's defaults.
 */
final class Security {
    /** Alias of our own key pair in the crypto. */
    static final String SELF = "self";
    /** Alias of the partner's certificate (the one we encrypt requests for). */
    static final String PARTNER = "partner";
    /** Key of the Crypto object in the interceptor properties (WSS4J's *PropRefId indirection). */
    private static final String CRYPTO_REF = "cxfPeerCrypto";

    private final Merlin crypto;

    private Security(Merlin crypto) {
        this.crypto = crypto;
    }

    /** Loads our key pair, the CAs we trust and optionally the partner's certificate, all PEM. */
    static Security load(String keyFile, String certFile, List<String> caFiles, String partnerCertFile)
        throws IOException {
        Pem.CryptoBuilder b = new Pem.CryptoBuilder();
        b.key(SELF, Pem.privateKey(keyFile), Pem.certs(certFile));
        for (String ca : caFiles) {
            for (java.security.cert.X509Certificate c : Pem.certs(ca)) {
                b.trust(c);
            }
        }
        if (partnerCertFile != null) {
            b.cert(PARTNER, Pem.cert(partnerCertFile));
        }
        return new Security(b.build());
    }

    private Map<String, Object> common(String actions) {
        Map<String, Object> m = new HashMap<>();
        m.put(ConfigurationConstants.ACTION, actions);
        m.put(CRYPTO_REF, crypto);
        CallbackHandler pw = callbacks -> {
            for (javax.security.auth.callback.Callback c : callbacks) {
                if (c instanceof WSPasswordCallback p) {
                    p.setPassword(Pem.KEY_PASSWORD);
                }
            }
        };
        m.put(ConfigurationConstants.PW_CALLBACK_REF, pw);
        return m;
    }

    /**
     * Outbound: sign with our key, the certificate in a BinarySecurityToken (DirectReference: the
     * usual CXF configuration, and with MTOM on the one whose certificate goes into a MIME part);
     * encrypt for encryptUser (PARTNER, or WSS4J's "useReqSigCert" on the service).
     */
    Map<String, Object> out(String actions, String encryptUser) {
        Map<String, Object> m = common(actions);
        m.put(ConfigurationConstants.USER, SELF);
        m.put(ConfigurationConstants.SIGNATURE_USER, SELF);
        m.put(ConfigurationConstants.SIG_PROP_REF_ID, CRYPTO_REF);
        m.put(ConfigurationConstants.SIG_KEY_ID, "DirectReference");
        List<String> l = actionList(actions);
        if (l.contains(ConfigurationConstants.ENCRYPT) || l.contains(ConfigurationConstants.ENCRYPTION)) {
            m.put(ConfigurationConstants.ENCRYPTION_USER, encryptUser);
            m.put(ConfigurationConstants.ENC_PROP_REF_ID, CRYPTO_REF);
        }
        return m;
    }

    /**
     * The flags that override a WSS4J default of the outbound side, and the WSS4J property each
     * sets; without them CXF and WSS4J choose (RSA-SHA1, SHA-1 digests, only the Body signed, ...).
     */
    static final Map<String, String> OVERRIDES = Map.of(
        "signature-algorithm", ConfigurationConstants.SIG_ALGO,
        "digest-algorithm", ConfigurationConstants.SIG_DIGEST_ALGO,
        "signature-parts", ConfigurationConstants.SIGNATURE_PARTS,
        "symmetric-algorithm", ConfigurationConstants.ENC_SYM_ALGO,
        "key-transport", ConfigurationConstants.ENC_KEY_TRANSPORT,
        "encryption-parts", ConfigurationConstants.ENCRYPTION_PARTS);

    /** SOAP 1.1 and 1.2 envelope namespaces. */
    static final String SOAP11 = "http://schemas.xmlsoap.org/soap/envelope/";
    static final String SOAP12 = "http://www.w3.org/2003/05/soap-envelope";
    private static final String WSU =
        "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd";

    /**
     * Applies the OVERRIDES flags given in a to an outbound configuration; --sign-timestamp signs
     * the Timestamp besides the Body (WSS4J signs only the Body by default, which CXF's own
     * DefaultCryptoCoverageChecker, and wssgw's default signedParts, refuse).
     */
    static Map<String, Object> override(Map<String, Object> out, Args a, String soap) {
        if (a.flag("sign-timestamp")) {
            String env = soap.equals("1.2") ? SOAP12 : SOAP11;
            out.put(ConfigurationConstants.SIGNATURE_PARTS, "{}{" + env + "}Body;{}{" + WSU + "}Timestamp");
        }
        for (Map.Entry<String, String> e : OVERRIDES.entrySet()) {
            String v = a.get(e.getKey());
            if (v != null) {
                out.put(e.getValue(), v);
            }
        }
        return out;
    }

    /** Inbound: the actions that must be present; signatures trusted through the CAs, decryption with our key. */
    Map<String, Object> in(String actions) {
        Map<String, Object> m = common(actions);
        m.put(ConfigurationConstants.SIG_VER_PROP_REF_ID, CRYPTO_REF);
        m.put(ConfigurationConstants.DEC_PROP_REF_ID, CRYPTO_REF);
        return m;
    }

    /** Splits "Timestamp Signature Encrypt" for reporting. */
    static List<String> actionList(String actions) {
        List<String> l = new ArrayList<>();
        for (String a : actions.trim().split("\\s+")) {
            if (!a.isEmpty()) {
                l.add(a);
            }
        }
        return l;
    }
}
