package trust

import (
	"crypto/x509"
	"crypto/x509/pkix"

	"github.com/wssgw/wssgw/internal/testpki"
)

// The certificate options of this package's tests; the certificates are
// testpki's (Issuer, SelfSigned), shared with crypto's and reload's tests.
func withKeyUsage(ku x509.KeyUsage) testpki.CertOpt {
	return func(c *x509.Certificate) { c.KeyUsage = ku }
}
func withEKU(e ...x509.ExtKeyUsage) testpki.CertOpt {
	return func(c *x509.Certificate) { c.ExtKeyUsage = e }
}
func withSubject(n pkix.Name) testpki.CertOpt { return func(c *x509.Certificate) { c.Subject = n } }
func withSKI(ski []byte) testpki.CertOpt      { return func(c *x509.Certificate) { c.SubjectKeyId = ski } }
