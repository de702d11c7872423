package io.wssgw.interop.wss4j;

import java.util.LinkedHashMap;
import java.util.Map;

import io.wssgw.interop.peer.Args;

import org.apache.wss4j.dom.WSConstants;

/** Short names for algorithm URIs and key identifier types. A full URI is always accepted. */
final class Algos {
    private Algos() {
    }

    static final Map<String, String> SIGNATURE = new LinkedHashMap<>();
    static final Map<String, String> DIGEST = new LinkedHashMap<>();
    static final Map<String, String> C14N = new LinkedHashMap<>();
    static final Map<String, String> SYMMETRIC = new LinkedHashMap<>();
    static final Map<String, String> KEY_TRANSPORT = new LinkedHashMap<>();
    static final Map<String, String> MGF = new LinkedHashMap<>();
    static final Map<String, Integer> KEY_IDENTIFIER = new LinkedHashMap<>();

    static {
        SIGNATURE.put("rsa-sha1", WSConstants.RSA_SHA1);
        SIGNATURE.put("rsa-sha256", WSConstants.RSA_SHA256);
        SIGNATURE.put("rsa-sha384", "http://www.w3.org/2001/04/xmldsig-more#rsa-sha384");
        SIGNATURE.put("rsa-sha512", WSConstants.RSA_SHA512);
        SIGNATURE.put("rsa-pss-sha256", "http://www.w3.org/2007/05/xmldsig-more#sha256-rsa-MGF1");
        SIGNATURE.put("ecdsa-sha256", WSConstants.ECDSA_SHA256);
        SIGNATURE.put("ecdsa-sha384", WSConstants.ECDSA_SHA384);
        SIGNATURE.put("ecdsa-sha512", WSConstants.ECDSA_SHA512);

        DIGEST.put("sha1", WSConstants.SHA1);
        DIGEST.put("sha256", WSConstants.SHA256);
        DIGEST.put("sha384", WSConstants.SHA384);
        DIGEST.put("sha512", WSConstants.SHA512);

        C14N.put("exc-c14n", WSConstants.C14N_EXCL_OMIT_COMMENTS);
        C14N.put("c14n", WSConstants.C14N_OMIT_COMMENTS);

        SYMMETRIC.put("aes128-gcm", WSConstants.AES_128_GCM);
        SYMMETRIC.put("aes192-gcm", WSConstants.AES_192_GCM);
        SYMMETRIC.put("aes256-gcm", WSConstants.AES_256_GCM);
        SYMMETRIC.put("aes128-cbc", WSConstants.AES_128);
        SYMMETRIC.put("aes192-cbc", WSConstants.AES_192);
        SYMMETRIC.put("aes256-cbc", WSConstants.AES_256);

        KEY_TRANSPORT.put("rsa-oaep-mgf1p", WSConstants.KEYTRANSPORT_RSAOAEP);
        KEY_TRANSPORT.put("rsa-oaep", WSConstants.KEYTRANSPORT_RSAOAEP_XENC11);
        KEY_TRANSPORT.put("rsa-1_5", WSConstants.KEYTRANSPORT_RSA15);

        MGF.put("mgf1sha1", WSConstants.MGF_SHA1);
        MGF.put("mgf1sha256", WSConstants.MGF_SHA256);
        MGF.put("mgf1sha384", WSConstants.MGF_SHA384);
        MGF.put("mgf1sha512", WSConstants.MGF_SHA512);

        KEY_IDENTIFIER.put("bst", WSConstants.BST_DIRECT_REFERENCE);
        KEY_IDENTIFIER.put("issuer-serial", WSConstants.ISSUER_SERIAL);
        KEY_IDENTIFIER.put("ski", WSConstants.SKI_KEY_IDENTIFIER);
        KEY_IDENTIFIER.put("thumbprint", WSConstants.THUMBPRINT_IDENTIFIER);
        KEY_IDENTIFIER.put("x509", WSConstants.X509_KEY_IDENTIFIER);
    }

    static String uri(Map<String, String> table, String flag, String v) throws Args.UsageException {
        if (v == null) {
            return null;
        }
        String u = table.get(v.toLowerCase());
        if (u != null) {
            return u;
        }
        if (v.contains("://") || v.startsWith("urn:")) {
            return v;
        }
        throw new Args.UsageException("--" + flag + ": unknown value " + v + " (known: "
            + String.join(", ", table.keySet()) + ", or a full URI)");
    }

    static int keyIdentifier(String flag, String v, int def) throws Args.UsageException {
        if (v == null) {
            return def;
        }
        Integer i = KEY_IDENTIFIER.get(v.toLowerCase());
        if (i == null) {
            throw new Args.UsageException("--" + flag + ": unknown value " + v + " (known: "
                + String.join(", ", KEY_IDENTIFIER.keySet()) + ")");
        }
        return i;
    }
}
