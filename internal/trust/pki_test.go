package trust

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// t0 is the fixed "message time" of the tests; certificates are made
// relative to it, so nothing depends on the wall clock except CRL loading.
var t0 = time.Now().Truncate(time.Second)

// tca and the helpers below make throw-away certificates for this package's
// tests; internal/crypto's pki_test.go has the same helpers for its own.
type tca struct {
	cert   *x509.Certificate
	key    crypto.Signer
	serial int64
}

type certOpt func(*x509.Certificate)

func withKeyUsage(ku x509.KeyUsage) certOpt { return func(c *x509.Certificate) { c.KeyUsage = ku } }
func withEKU(e ...x509.ExtKeyUsage) certOpt { return func(c *x509.Certificate) { c.ExtKeyUsage = e } }
func withSubject(n pkix.Name) certOpt       { return func(c *x509.Certificate) { c.Subject = n } }
func withSKI(ski []byte) certOpt            { return func(c *x509.Certificate) { c.SubjectKeyId = ski } }

var (
	keyMu    sync.Mutex
	rsaCache = map[int]*rsa.PrivateKey{}
)

func ecKey(t testing.TB) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	return k
}

// rsaKey returns a (per size, shared) RSA key: generation is slow.
func rsaKey(t testing.TB, bits int) *rsa.PrivateKey {
	keyMu.Lock()
	defer keyMu.Unlock()
	if k, ok := rsaCache[bits]; ok {
		return k
	}
	k, err := rsa.GenerateKey(rand.Reader, bits)
	require.NoError(t, err)
	rsaCache[bits] = k
	return k
}

// newCA makes a root (parent nil) or an intermediate CA.
func newCA(t testing.TB, name string, parent *tca, opts ...certOpt) *tca {
	key := ecKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name, Organization: []string{"Org"}},
		NotBefore: t0.Add(-24 * time.Hour), NotAfter: t0.Add(365 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	for _, o := range opts {
		o(tmpl)
	}
	issuer, ikey := tmpl, crypto.Signer(key)
	if parent != nil {
		parent.serial++
		tmpl.SerialNumber = big.NewInt(parent.serial)
		issuer, ikey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, issuer, key.Public(), ikey)
	require.NoError(t, err)
	c, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return &tca{cert: c, key: key, serial: 100}
}

// issue makes a leaf for key (a fresh P-256 key when nil).
func (ca *tca) issue(t testing.TB, name string, key crypto.Signer, opts ...certOpt) (*x509.Certificate, crypto.Signer) {
	if key == nil {
		key = ecKey(t)
	}
	ca.serial++
	tmpl := leafTemplate(name, ca.serial)
	for _, o := range opts {
		o(tmpl)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	require.NoError(t, err)
	c, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return c, key
}

func leafTemplate(name string, serial int64) *x509.Certificate {
	return &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name, Organization: []string{"Org"}},
		NotBefore: t0.Add(-time.Hour), NotAfter: t0.Add(30 * 24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, DNSNames: []string{name + ".example"},
	}
}

// selfSigned makes a self-signed leaf (not a CA).
func selfSigned(t testing.TB, name string, opts ...certOpt) (*x509.Certificate, crypto.Signer) {
	key := ecKey(t)
	tmpl := leafTemplate(name, 7)
	for _, o := range opts {
		o(tmpl)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	require.NoError(t, err)
	c, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return c, key
}

// crl makes a PEM CRL revoking serials, valid until nextUpdate.
func (ca *tca) crl(t testing.TB, nextUpdate time.Time, serials ...*big.Int) []byte {
	var entries []x509.RevocationListEntry
	for _, s := range serials {
		entries = append(entries, x509.RevocationListEntry{SerialNumber: s, RevocationTime: t0.Add(-time.Minute)})
	}
	tmpl := &x509.RevocationList{
		Number: big.NewInt(1), ThisUpdate: t0.Add(-time.Hour), NextUpdate: nextUpdate,
		RevokedCertificateEntries: entries,
	}
	der, err := x509.CreateRevocationList(rand.Reader, tmpl, ca.cert, ca.key)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "X509 CRL", Bytes: der})
}

func certsPEM(certs ...*x509.Certificate) []byte {
	var out []byte
	for _, c := range certs {
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})...)
	}
	return out
}

func pkcs8PEM(t testing.TB, key crypto.Signer) []byte {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

func writeFile(t testing.TB, dir, name string, data []byte) string {
	f := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(f, data, 0o600))
	return f
}
