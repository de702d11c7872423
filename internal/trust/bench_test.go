package trust

import (
	"crypto/x509"
	"testing"

	"github.com/wssgw/wssgw/internal/testpki"
)

func benchStore(b *testing.B) (*Store, *x509.Certificate, *x509.Certificate) {
	dir := b.TempDir()
	root := testpki.NewIssuer(b, "Root", nil)
	inter := testpki.NewIssuer(b, "Inter", root)
	leaf, _ := inter.Issue(b, "leaf", testpki.RSAKey(b, 2048))
	s, err := NewStore(Options{
		CAFiles:  []string{testpki.WriteFile(b, dir, "root.crt", testpki.CertsPEM(root.Cert))},
		CRLFiles: []string{testpki.WriteFile(b, dir, "root.crl", root.CRL(b, testpki.T0.Add(24*60*60*1e9)))},
	})
	if err != nil {
		b.Fatal(err)
	}
	return s, leaf, inter.Cert
}

// BenchmarkVerifyCached is the template fast path: the decision is in the cache.
func BenchmarkVerifyCached(b *testing.B) {
	s, leaf, inter := benchStore(b)
	in := []*x509.Certificate{inter}
	if _, err := s.Verify(leaf, in, testpki.T0, PurposeSigning); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.Verify(leaf, in, testpki.T0, PurposeSigning); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifyUncached is a full decision: chain building and checks.
func BenchmarkVerifyUncached(b *testing.B) {
	s, leaf, inter := benchStore(b)
	in := []*x509.Certificate{inter}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := s.verify(leaf, in, testpki.T0, PurposeSigning); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseDN(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseDN(`CN="Test CA", O="Acme, Inc.", C=DE`); err != nil {
			b.Fatal(err)
		}
	}
}
