package io.wssgw.interop.peer;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;

import org.apache.wss4j.common.crypto.Merlin;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;

/** PEM loading and in-memory WSS4J Merlin crypto construction (no keytool/openssl at run time). */
public final class Pem {
    /** Password of the private-key entries of the in-memory key stores. */
    public static final String KEY_PASSWORD = "interop-peer";

    private Pem() {
    }

    public static List<X509Certificate> certs(String file) throws IOException {
        List<X509Certificate> out = new ArrayList<>();
        JcaX509CertificateConverter conv = new JcaX509CertificateConverter();
        try (Reader r = Files.newBufferedReader(Path.of(file), StandardCharsets.US_ASCII);
             PEMParser p = new PEMParser(r)) {
            Object o;
            while ((o = p.readObject()) != null) {
                if (o instanceof X509CertificateHolder h) {
                    try {
                        out.add(conv.getCertificate(h));
                    } catch (CertificateException e) {
                        throw new IOException(file + ": " + e.getMessage(), e);
                    }
                }
            }
        }
        if (out.isEmpty()) {
            throw new IOException(file + ": no CERTIFICATE PEM block");
        }
        return out;
    }

    public static X509Certificate cert(String file) throws IOException {
        return certs(file).get(0);
    }

    /** Reads a PKCS#8 ("PRIVATE KEY"), PKCS#1 ("RSA PRIVATE KEY") or SEC1 ("EC PRIVATE KEY") key. */
    public static PrivateKey privateKey(String file) throws IOException {
        JcaPEMKeyConverter conv = new JcaPEMKeyConverter();
        try (Reader r = Files.newBufferedReader(Path.of(file), StandardCharsets.US_ASCII);
             PEMParser p = new PEMParser(r)) {
            Object o;
            while ((o = p.readObject()) != null) {
                if (o instanceof PrivateKeyInfo pki) {
                    return conv.getPrivateKey(pki);
                }
                if (o instanceof PEMKeyPair kp) {
                    return conv.getKeyPair(kp).getPrivate();
                }
            }
        }
        throw new IOException(file + ": no unencrypted PRIVATE KEY PEM block");
    }

    public static KeyStore emptyStore() throws IOException {
        try {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(null, null);
            return ks;
        } catch (Exception e) {
            throw new IOException("cannot create key store: " + e.getMessage(), e);
        }
    }

    /** Builder of a Merlin crypto with a key store (own key, looked-up certs) and a trust store (CAs). */
    public static final class CryptoBuilder {
        private final KeyStore keyStore;
        private KeyStore trustStore;
        private int n;

        public CryptoBuilder() throws IOException {
            keyStore = emptyStore();
        }

        public CryptoBuilder key(String alias, PrivateKey key, List<X509Certificate> chain) throws IOException {
            try {
                keyStore.setKeyEntry(alias, key, KEY_PASSWORD.toCharArray(), chain.toArray(new Certificate[0]));
            } catch (Exception e) {
                throw new IOException("key entry: " + e.getMessage(), e);
            }
            return this;
        }

        public CryptoBuilder cert(String alias, X509Certificate c) throws IOException {
            try {
                keyStore.setCertificateEntry(alias, c);
            } catch (Exception e) {
                throw new IOException("certificate entry: " + e.getMessage(), e);
            }
            return this;
        }

        public CryptoBuilder trust(X509Certificate c) throws IOException {
            try {
                if (trustStore == null) {
                    trustStore = emptyStore();
                }
                trustStore.setCertificateEntry("ca" + (n++), c);
            } catch (Exception e) {
                throw new IOException("trust entry: " + e.getMessage(), e);
            }
            return this;
        }

        public Merlin build() {
            Merlin m = new Merlin();
            m.setKeyStore(keyStore);
            if (trustStore != null) {
                m.setTrustStore(trustStore);
            }
            return m;
        }
    }
}
