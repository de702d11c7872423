package crypto

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"math/big"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"software.sslmate.com/src/go-pkcs12"

	"github.com/wssgw/wssgw/internal/testpki"
	"github.com/wssgw/wssgw/internal/testvectors"
)

func TestLoadKeyPair(t *testing.T) {
	dir := t.TempDir()
	ca := testpki.NewIssuer(t, "Load CA", nil)
	w := func(name string, data []byte) string { return testpki.WriteFile(t, dir, name, data) }
	pemKey := func(typ string, der []byte) []byte { return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}) }

	ecLeaf, ecK := ca.Issue(t, "ec", nil)
	rsaLeaf, rsaK := ca.Issue(t, "rsa", testpki.RSAKey(t, 2048))
	edLeaf, edK := ca.Issue(t, "ed", testpki.EdKey(t))
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	p384Leaf, _ := ca.Issue(t, "p384", p384)
	weakLeaf, weakK := ca.Issue(t, "weak", testpki.RSAKey(t, 1024))
	p224, _ := ecdsa.GenerateKey(elliptic.P224(), rand.Reader)
	p224Leaf, _ := ca.Issue(t, "p224", p224)
	otherLeaf, _ := ca.Issue(t, "other", nil)

	sec1, err := x509.MarshalECPrivateKey(ecK.(*ecdsa.PrivateKey))
	require.NoError(t, err)
	p12, err := pkcs12.Modern.Encode(ecK, ecLeaf, []*x509.Certificate{ca.Cert}, "s3cret")
	require.NoError(t, err)
	p12Legacy, err := pkcs12.LegacyDES.Encode(rsaK, rsaLeaf, nil, "s3cret")
	require.NoError(t, err)
	encBlock := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Headers: map[string]string{
		"Proc-Type": "4,ENCRYPTED", "DEK-Info": "AES-256-CBC,00112233445566778899AABBCCDDEEFF"}, Bytes: []byte{1, 2, 3}})

	tests := []struct {
		name string
		opts KeyFileOptions
		leaf *x509.Certificate
		err  error
	}{
		{"ok/pkcs8-ecdsa-p256", KeyFileOptions{CertFile: w("ec.crt", testpki.CertsPEM(ecLeaf)), KeyFile: w("ec.key", testpki.PKCS8PEM(t, ecK))}, ecLeaf, nil},
		{"ok/sec1-ecdsa", KeyFileOptions{CertFile: w("ec.crt", testpki.CertsPEM(ecLeaf)), KeyFile: w("ec1.key", pemKey("EC PRIVATE KEY", sec1))}, ecLeaf, nil},
		{"ok/pkcs1-rsa", KeyFileOptions{CertFile: w("rsa.crt", testpki.CertsPEM(rsaLeaf)), KeyFile: w("rsa.key", pemKey("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rsaK.(*rsa.PrivateKey))))}, rsaLeaf, nil},
		{"ok/pkcs8-ed25519", KeyFileOptions{CertFile: w("ed.crt", testpki.CertsPEM(edLeaf)), KeyFile: w("ed.key", testpki.PKCS8PEM(t, edK))}, edLeaf, nil},
		{"ok/ecdsa-p384", KeyFileOptions{CertFile: w("p384.crt", testpki.CertsPEM(p384Leaf)), KeyFile: w("p384.key", testpki.PKCS8PEM(t, p384))}, p384Leaf, nil},
		{"ok/chain-leaf-not-first", KeyFileOptions{CertFile: w("chain.crt", testpki.CertsPEM(ca.Cert, ecLeaf)), KeyFile: w("ec.key", testpki.PKCS8PEM(t, ecK))}, ecLeaf, nil},
		{"ok/key-and-cert-in-one-file", KeyFileOptions{CertFile: w("both.pem", append(testpki.PKCS8PEM(t, ecK), testpki.CertsPEM(ecLeaf)...))}, ecLeaf, nil},
		{"ok/rsa-1024-with-lowered-minimum", KeyFileOptions{CertFile: w("weak.crt", testpki.CertsPEM(weakLeaf)), KeyFile: w("weak.key", testpki.PKCS8PEM(t, weakK)), MinRSABits: 1024}, weakLeaf, nil},
		{"ok/pkcs12-modern-password", KeyFileOptions{PKCS12File: w("a.p12", p12), Password: "s3cret"}, ecLeaf, nil},
		{"ok/pkcs12-password-file", KeyFileOptions{PKCS12File: w("a.p12", p12), PasswordFile: w("pw", []byte("s3cret\n"))}, ecLeaf, nil},
		{"ok/pkcs12-legacy-3des", KeyFileOptions{PKCS12File: w("b.p12", p12Legacy), Password: "s3cret"}, rsaLeaf, nil},
		{"fail/rsa-1024", KeyFileOptions{CertFile: w("weak.crt", testpki.CertsPEM(weakLeaf)), KeyFile: w("weak.key", testpki.PKCS8PEM(t, weakK))}, nil, ErrKeyTooWeak},
		{"fail/ecdsa-p224", KeyFileOptions{CertFile: w("p224.crt", testpki.CertsPEM(p224Leaf)), KeyFile: w("p224.key", testpki.PKCS8PEM(t, p224))}, nil, ErrUnsupportedKey},
		{"fail/key-cert-mismatch", KeyFileOptions{CertFile: w("other.crt", testpki.CertsPEM(otherLeaf)), KeyFile: w("ec.key", testpki.PKCS8PEM(t, ecK))}, nil, ErrKeyMismatch},
		{"fail/encrypted-pem-legacy", KeyFileOptions{CertFile: w("rsa.crt", testpki.CertsPEM(rsaLeaf)), KeyFile: w("enc.key", encBlock)}, nil, ErrEncryptedKey},
		{"fail/encrypted-pkcs8", KeyFileOptions{CertFile: w("rsa.crt", testpki.CertsPEM(rsaLeaf)), KeyFile: w("enc8.key", pemKey("ENCRYPTED PRIVATE KEY", []byte{1}))}, nil, ErrEncryptedKey},
		{"fail/pkcs12-wrong-password", KeyFileOptions{PKCS12File: w("a.p12", p12), Password: "wrong"}, nil, ErrBadPassword},
		{"fail/pkcs12-garbage", KeyFileOptions{PKCS12File: w("g.p12", []byte("garbage")), Password: "x"}, nil, ErrLoad},
		{"fail/missing-file", KeyFileOptions{CertFile: filepath.Join(dir, "nope.crt"), KeyFile: filepath.Join(dir, "nope.key")}, nil, ErrLoad},
		{"fail/no-key-in-file", KeyFileOptions{CertFile: w("ec.crt", testpki.CertsPEM(ecLeaf))}, nil, ErrLoad},
		{"fail/no-cert-in-file", KeyFileOptions{CertFile: w("k.pem", testpki.PKCS8PEM(t, ecK))}, nil, ErrLoad},
		{"fail/nothing-configured", KeyFileOptions{}, nil, ErrLoad},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kp, err := LoadKeyPair(tc.opts)
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				assert.Regexp(t, `^crypto: `, err.Error())
				assert.Equal(t, 1, strings.Count(err.Error(), "crypto: "), err.Error())
				assert.NotEqual(t, ReasonOther, Reason(err))
				return
			}
			require.NoError(t, err)
			assert.True(t, kp.Certificate.Equal(tc.leaf))
			assert.True(t, kp.Chain[0].Equal(tc.leaf))
			pub := kp.Signer.Public().(interface{ Equal(crypto.PublicKey) bool })
			assert.True(t, pub.Equal(kp.Certificate.PublicKey))
			_, isRSA := kp.Signer.Public().(*rsa.PublicKey) // in an openssl build the key is OpenSSL's
			_, dec := kp.Decrypter()
			assert.Equal(t, isRSA, dec)
		})
	}
}

func TestParseCertificatesDER(t *testing.T) {
	ca := testpki.NewIssuer(t, "DER CA", nil)
	cs, err := ParseCertificates(ca.Cert.Raw)
	require.NoError(t, err)
	require.Len(t, cs, 1)
	_, err = ParseCertificates([]byte("not a cert"))
	require.ErrorIs(t, err, ErrLoad)
}

// TestWSS4JVectorKeys loads the real-world key pairs of the committed WSS4J
// vectors (made with openssl); internal/trust's TestWSS4JVectorTrust
// verifies their certificates against their CA.
func TestWSS4JVectorKeys(t *testing.T) {
	dir := testvectors.Path(t, "wss4j/keys")
	f := func(n string) string { return filepath.Join(dir, n) }
	for _, name := range []string{"client", "server"} {
		kp, err := LoadKeyPair(KeyFileOptions{CertFile: f(name + ".crt"), KeyFile: f(name + ".key")})
		require.NoError(t, err, name)
		_, ok := kp.Decrypter()
		assert.True(t, ok, "RSA key is a Decrypter")
	}
}

func TestCheckPublicKey(t *testing.T) {
	require.NoError(t, CheckPublicKey(testpki.RSAKey(t, 1024).Public(), 1024))
	require.ErrorIs(t, CheckPublicKey(testpki.RSAKey(t, 1024).Public(), 0), ErrKeyTooWeak)
	require.ErrorIs(t, CheckPublicKey(big.NewInt(1), 0), ErrUnsupportedKey)
}
