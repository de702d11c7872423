package testpki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
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
)

// This file makes certificates in memory, for the unit tests of the
// packages that check them (crypto, reload, trust), which shape each
// certificate with CertOpts; CA and Leaf above write files for the
// gateway's and the end-to-end tests.

// T0 is the fixed "message time" of the tests; Issuer's certificates are
// made relative to it, so nothing depends on the wall clock except CRL
// loading.
var T0 = time.Now().Truncate(time.Second)

// Issuer is a CA kept in memory.
type Issuer struct {
	Cert   *x509.Certificate
	Key    crypto.Signer
	serial int64
}

// CertOpt changes a certificate's template before it is signed.
type CertOpt func(*x509.Certificate)

var (
	keyMu    sync.Mutex
	rsaCache = map[int]*rsa.PrivateKey{}
)

// ECKey is a fresh P-256 key.
func ECKey(t testing.TB) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	check(t, err)
	return k
}

// RSAKey returns a (per size, shared) RSA key: generation is slow.
func RSAKey(t testing.TB, bits int) *rsa.PrivateKey {
	keyMu.Lock()
	defer keyMu.Unlock()
	if k, ok := rsaCache[bits]; ok {
		return k
	}
	k, err := rsa.GenerateKey(rand.Reader, bits)
	check(t, err)
	rsaCache[bits] = k
	return k
}

// EdKey is a fresh Ed25519 key.
func EdKey(t testing.TB) ed25519.PrivateKey {
	_, k, err := ed25519.GenerateKey(rand.Reader)
	check(t, err)
	return k
}

// NewIssuer makes a root (parent nil) or an intermediate CA.
func NewIssuer(t testing.TB, name string, parent *Issuer, opts ...CertOpt) *Issuer {
	key := ECKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name, Organization: []string{"Org"}},
		NotBefore: T0.Add(-24 * time.Hour), NotAfter: T0.Add(365 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	for _, o := range opts {
		o(tmpl)
	}
	issuer, ikey := tmpl, crypto.Signer(key)
	if parent != nil {
		parent.serial++
		tmpl.SerialNumber = big.NewInt(parent.serial)
		issuer, ikey = parent.Cert, parent.Key
	}
	return &Issuer{Cert: create(t, tmpl, issuer, key.Public(), ikey), Key: key, serial: 100}
}

// Issue makes a leaf for key (a fresh P-256 key when nil).
func (ca *Issuer) Issue(t testing.TB, name string, key crypto.Signer, opts ...CertOpt) (*x509.Certificate, crypto.Signer) {
	if key == nil {
		key = ECKey(t)
	}
	ca.serial++
	tmpl := LeafTemplate(name, ca.serial)
	for _, o := range opts {
		o(tmpl)
	}
	return create(t, tmpl, ca.Cert, key.Public(), ca.Key), key
}

// SelfSigned makes a self-signed leaf (not a CA).
func SelfSigned(t testing.TB, name string, opts ...CertOpt) (*x509.Certificate, crypto.Signer) {
	key := ECKey(t)
	tmpl := LeafTemplate(name, 7)
	for _, o := range opts {
		o(tmpl)
	}
	return create(t, tmpl, tmpl, key.Public(), key), key
}

// CRL makes a PEM CRL revoking serials, valid until nextUpdate.
func (ca *Issuer) CRL(t testing.TB, nextUpdate time.Time, serials ...*big.Int) []byte {
	var entries []x509.RevocationListEntry
	for _, s := range serials {
		entries = append(entries, x509.RevocationListEntry{SerialNumber: s, RevocationTime: T0.Add(-time.Minute)})
	}
	tmpl := &x509.RevocationList{
		Number: big.NewInt(1), ThisUpdate: T0.Add(-time.Hour), NextUpdate: nextUpdate,
		RevokedCertificateEntries: entries,
	}
	der, err := x509.CreateRevocationList(rand.Reader, tmpl, ca.Cert, ca.Key)
	check(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "X509 CRL", Bytes: der})
}

// LeafTemplate is the template of a leaf valid around T0.
func LeafTemplate(name string, serial int64) *x509.Certificate {
	return &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name, Organization: []string{"Org"}},
		NotBefore: T0.Add(-time.Hour), NotAfter: T0.Add(30 * 24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, DNSNames: []string{name + ".example"},
	}
}

// CertsPEM is certs as concatenated PEM blocks.
func CertsPEM(certs ...*x509.Certificate) []byte {
	var out []byte
	for _, c := range certs {
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})...)
	}
	return out
}

// PKCS8PEM is key as a PKCS#8 PEM block.
func PKCS8PEM(t testing.TB, key crypto.Signer) []byte {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	check(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

// WriteFile writes data to dir/name (mode 0600) and returns the path.
func WriteFile(t testing.TB, dir, name string, data []byte) string {
	f := filepath.Join(dir, name)
	check(t, os.WriteFile(f, data, 0o600))
	return f
}

func create(t testing.TB, tmpl, issuer *x509.Certificate, pub crypto.PublicKey, key crypto.Signer) *x509.Certificate {
	der, err := x509.CreateCertificate(rand.Reader, tmpl, issuer, pub, key)
	check(t, err)
	c, err := x509.ParseCertificate(der)
	check(t, err)
	return c
}

func check(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
