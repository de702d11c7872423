// Package testpki makes throw-away certificate authorities and leaf
// certificates for tests, so that no key is ever committed. It is imported
// by tests only.
package testpki

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a test certificate authority.
type CA struct {
	Cert    *x509.Certificate
	Key     crypto.Signer
	CertPEM []byte
	serial  int64
}

// Leaf is an issued certificate with its key, also written as PEM files.
type Leaf struct {
	Cert              *x509.Certificate
	Key               crypto.Signer
	CertFile, KeyFile string
}

// TLS returns the leaf as a tls.Certificate.
func (l *Leaf) TLS(t testing.TB) tls.Certificate {
	t.Helper()
	c, err := tls.LoadX509KeyPair(l.CertFile, l.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// NewCA makes a self-signed ECDSA P-256 CA valid for a day.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	key := ECKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &CA{Cert: cert, Key: key, CertPEM: pemBlock("CERTIFICATE", der), serial: 1}
}

// Intermediate makes a CA for name issued by ca (path length 0), so that
// tests can build chains root → intermediate → leaf. Its key is ECDSA P-256.
func (ca *CA) Intermediate(t testing.TB, name string) *CA {
	t.Helper()
	key := ECKey(t)
	ca.serial++
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(ca.serial),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		MaxPathLenZero:        true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	// Serials of its leaves start high so that they never equal one of
	// the root's (IssuerSerial lookups stay unambiguous either way).
	return &CA{Cert: cert, Key: key, CertPEM: pemBlock("CERTIFICATE", der), serial: 1000}
}

// WriteCert writes the CA certificate to dir and returns the file name.
func (ca *CA) WriteCert(t testing.TB, dir string) string {
	t.Helper()
	f := filepath.Join(dir, ca.Cert.Subject.CommonName+"-ca.crt")
	write(t, f, ca.CertPEM)
	return f
}

// Pool is a cert pool holding the CA.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// Issue makes a leaf for name usable as a TLS server (for 127.0.0.1,
// localhost and name) and client, and writes it to dir.
func (ca *CA) Issue(t testing.TB, dir, name string) *Leaf {
	t.Helper()
	return ca.issue(t, dir, name, ECKey(t))
}

// IssueRSA is Issue with an RSA-2048 key that may also encrypt (key
// transport for XML Encryption needs RSA).
func (ca *CA) IssueRSA(t testing.TB, dir, name string) *Leaf {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return ca.issue(t, dir, name, key)
}

// IssueKey is Issue for a given key, such as a legacy RSA-1024 one.
func (ca *CA) IssueKey(t testing.TB, dir, name string, key crypto.Signer) *Leaf {
	t.Helper()
	return ca.issue(t, dir, name, key)
}

// Renew issues another certificate for l's key and subject with a new
// serial number, a same-key renewal, and writes it to dir (pass another
// directory than l's, or l's files are replaced).
func (ca *CA) Renew(t testing.TB, dir string, l *Leaf) *Leaf {
	t.Helper()
	return ca.issue(t, dir, l.Cert.Subject.CommonName, l.Key)
}

func (ca *CA) issue(t testing.TB, dir, name string, key crypto.Signer) *Leaf {
	ca.serial++
	spki, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		t.Fatal(err)
	}
	var info struct {
		Algorithm pkix.AlgorithmIdentifier
		PublicKey asn1.BitString
	}
	if _, err := asn1.Unmarshal(spki, &info); err != nil {
		t.Fatal(err)
	}
	// RFC 5280 §4.2.1.2 method 1, so that peers can reference the
	// certificate by SubjectKeyIdentifier.
	ski := sha1.Sum(info.PublicKey.Bytes)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(ca.serial),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:     []string{name, "localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		SubjectKeyId: ski[:],
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	l := &Leaf{Cert: cert, Key: key, CertFile: filepath.Join(dir, name+".crt"), KeyFile: filepath.Join(dir, name+".key")}
	write(t, l.CertFile, pemBlock("CERTIFICATE", der))
	write(t, l.KeyFile, pemBlock("PRIVATE KEY", kder))
	return l
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func write(t testing.TB, f string, b []byte) {
	t.Helper()
	if err := os.WriteFile(f, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
