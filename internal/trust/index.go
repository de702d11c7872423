package trust

import (
	"crypto/sha1"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"fmt"
	"math/big"

	"github.com/wssgw/wssgw/internal/crypto"
)

// Index finds certificates by the references of a WS-Security
// SecurityTokenReference that carries no token: X509IssuerSerial,
// SubjectKeyIdentifier and ThumbprintSHA1. A certificate found here is still
// only a candidate: it must pass Store.Verify.
type Index struct {
	issuerSerial map[string]*x509.Certificate
	ski          map[string]*x509.Certificate
	thumb        map[[sha1.Size]byte]*x509.Certificate
}

// NewIndex indexes certs. Certificates whose issuer cannot be parsed are
// left out of the issuer/serial index only.
func NewIndex(certs []*x509.Certificate) *Index {
	ix := &Index{
		issuerSerial: map[string]*x509.Certificate{},
		ski:          map[string]*x509.Certificate{},
		thumb:        map[[sha1.Size]byte]*x509.Certificate{},
	}
	for _, c := range certs {
		ix.thumb[sha1.Sum(c.Raw)] = c
		if dn, err := DNFromRaw(c.RawIssuer); err == nil {
			ix.issuerSerial[issuerSerialKey(dn, c.SerialNumber)] = c
		}
		if len(c.SubjectKeyId) > 0 {
			ix.ski[string(c.SubjectKeyId)] = c
		}
		if ski, err := ComputeSKI(c); err == nil {
			if _, taken := ix.ski[string(ski)]; !taken {
				ix.ski[string(ski)] = c
			}
		}
	}
	return ix
}

func issuerSerialKey(dn DN, serial *big.Int) string {
	return dn.canonical() + "\x00" + serial.String()
}

// ByIssuerSerial finds a certificate by issuer DN (any RFC 4514 / RFC 2253
// form, compared attribute by attribute) and serial number.
func (ix *Index) ByIssuerSerial(issuer string, serial *big.Int) (*x509.Certificate, error) {
	dn, err := ParseDN(issuer)
	if err != nil {
		return nil, err
	}
	if serial == nil {
		return nil, fmt.Errorf("crypto: no serial number: %w", ErrNotFound)
	}
	if c, ok := ix.issuerSerial[issuerSerialKey(dn, serial)]; ok {
		return c, nil
	}
	return nil, fmt.Errorf("crypto: issuer %q serial %s: %w", truncate(issuer, 200), serial, ErrNotFound)
}

// BySKI finds a certificate by SubjectKeyIdentifier: the extension value,
// or for any certificate the RFC 3280 SHA-1 of its public key bits.
func (ix *Index) BySKI(ski []byte) (*x509.Certificate, error) {
	if c, ok := ix.ski[string(ski)]; ok {
		return c, nil
	}
	return nil, fmt.Errorf("crypto: subject key identifier %x: %w", ski, ErrNotFound)
}

// ByThumbprintSHA1 finds a certificate by SHA-1 of its DER encoding.
func (ix *Index) ByThumbprintSHA1(tp []byte) (*x509.Certificate, error) {
	if len(tp) == sha1.Size {
		if c, ok := ix.thumb[[sha1.Size]byte(tp)]; ok {
			return c, nil
		}
	}
	return nil, fmt.Errorf("crypto: thumbprint %x: %w", tp, ErrNotFound)
}

// Len is the number of indexed certificates.
func (ix *Index) Len() int { return len(ix.thumb) }

// ComputeSKI is RFC 3280 method (1): SHA-1 of the subjectPublicKey BIT
// STRING value, as WSS4J computes it for certificates without the extension.
func ComputeSKI(c *x509.Certificate) ([]byte, error) {
	var spki struct {
		Algorithm pkix.AlgorithmIdentifier
		PublicKey asn1.BitString
	}
	if _, err := asn1.Unmarshal(c.RawSubjectPublicKeyInfo, &spki); err != nil {
		return nil, fmt.Errorf("crypto: SPKI: %v: %w", err, crypto.ErrLoad)
	}
	sum := sha1.Sum(spki.PublicKey.Bytes)
	return sum[:], nil
}
