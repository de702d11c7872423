package trust

import (
	"bytes"
	"crypto/sha1"
	"crypto/x509"
	"math/big"
	"sync"
)

// CertKeys are the values one certificate answers to as the target of a
// SecurityTokenReference lookup key (WSS X.509 Token Profile 1.1 §3.2):
// its issuer DN and serial number (X509IssuerSerial), its subject key
// identifier (X509SKI, KeyIdentifier SKI) and the SHA-1 of its DER
// (ThumbprintSHA1). Each is computed on first use and kept, so that a
// receiver that keeps one CertKeys per certificate of its configuration
// (its decryption certificates, its trust index) decodes none of them per
// message: decoding a certificate's issuer from DER and canonicalizing it
// cost about 3 % of a 4 KiB encrypted message's CPU (issue 14). The
// comparisons are exactly those of DN.Equal, ComputeSKI and
// Certificate.SubjectKeyId. Safe for concurrent use.
type CertKeys struct {
	c *x509.Certificate

	issuerOnce sync.Once
	issuer     string // the issuer DN's canonical form, when issuerOK
	issuerOK   bool   // RawIssuer parsed (DNFromRaw)

	skiOnce sync.Once
	ski     []byte // ComputeSKI, when skiOK
	skiOK   bool

	thumbOnce sync.Once
	thumb     [sha1.Size]byte
}

// NewCertKeys returns c's lookup values; none is computed yet.
func NewCertKeys(c *x509.Certificate) *CertKeys { return &CertKeys{c: c} }

// Certificate is the certificate the values are of.
func (k *CertKeys) Certificate() *x509.Certificate { return k.c }

// IssuerName is an issuer DN parsed once (ParseIssuerName) for comparing
// against any number of certificates' CertKeys.
type IssuerName struct{ canonical string }

// ParseIssuerName parses an X509IssuerName as ParseDN does, keeping the
// form DN.Equal compares.
func ParseIssuerName(s string) (IssuerName, error) {
	dn, err := ParseDN(s)
	if err != nil {
		return IssuerName{}, err
	}
	return IssuerName{dn.canonical()}, nil
}

// HasIssuerSerial reports whether the certificate's issuer equals issuer
// (DN.Equal) and its serial number is serial. A certificate whose issuer
// does not parse matches no name.
func (k *CertKeys) HasIssuerSerial(issuer IssuerName, serial *big.Int) bool {
	if serial == nil || k.c.SerialNumber == nil || k.c.SerialNumber.Cmp(serial) != 0 {
		return false
	}
	k.issuerOnce.Do(func() {
		if dn, err := DNFromRaw(k.c.RawIssuer); err == nil {
			k.issuer, k.issuerOK = dn.canonical(), true
		}
	})
	return k.issuerOK && k.issuer == issuer.canonical
}

// HasSKI reports whether ski identifies the certificate: as RFC 3280
// method (1) computes it (what WSS4J sends for a certificate without the
// extension), or as its SubjectKeyIdentifier extension says.
func (k *CertKeys) HasSKI(ski []byte) bool {
	if len(k.c.SubjectKeyId) > 0 && bytes.Equal(k.c.SubjectKeyId, ski) {
		return true
	}
	k.skiOnce.Do(func() {
		if v, err := ComputeSKI(k.c); err == nil {
			k.ski, k.skiOK = v, true
		}
	})
	return k.skiOK && bytes.Equal(k.ski, ski)
}

// HasThumbprintSHA1 reports whether tp is the SHA-1 of the certificate's
// DER encoding.
func (k *CertKeys) HasThumbprintSHA1(tp []byte) bool {
	k.thumbOnce.Do(func() { k.thumb = sha1.Sum(k.c.Raw) })
	return bytes.Equal(k.thumb[:], tp)
}
