package signer

import (
	"crypto/sha1"
	"crypto/x509"
	"fmt"

	"github.com/wssgw/wssgw/internal/trust"
)

// tokenRef writes the content of a wsse:SecurityTokenReference naming cert
// per mode (WSS X.509 Token Profile 1.1 §3.3). bstID is the wsu:Id of the
// BinarySecurityToken carrying cert, for RefBST. The wsse and ds prefixes
// must be bound by the caller's markup.
func tokenRef(b *buf, mode string, cert *x509.Certificate, bstID string) error {
	switch mode {
	case RefBST:
		// §3.3.2 direct reference; BSP 1.1 wants a ValueType that matches
		// the referenced token's.
		b.open("wsse:Reference")
		b.attr("URI", "#"+bstID)
		b.attr("ValueType", valueX509v3)
		b.empty("wsse:Reference")
	case RefIssuerSerial:
		// XMLDSig §4.5.4: IssuerName is an RFC 4514 (RFC 2253) string,
		// the serial a decimal integer.
		b.open("ds:X509Data")
		b.end()
		b.open("ds:X509IssuerSerial")
		b.end()
		b.elem("ds:X509IssuerName", issuerName(cert))
		b.elem("ds:X509SerialNumber", cert.SerialNumber.String())
		b.close("ds:X509IssuerSerial")
		b.close("ds:X509Data")
	case RefSKI:
		ski := cert.SubjectKeyId
		if len(ski) == 0 {
			// RFC 3280 §4.2.1.2 method (1), as WSS4J computes it for
			// certificates without the extension.
			var err error
			if ski, err = trust.ComputeSKI(cert); err != nil {
				return fmt.Errorf("%w: %w", ErrKey, err)
			}
		}
		keyIdentifier(b, valueSKI, ski)
	case RefX509v3:
		// X.509 Token Profile 1.1 §3.2: a KeyIdentifier of ValueType
		// #X509v3 holds the whole DER certificate, as WSS4J's
		// X509KeyIdentifier writes it (issue 15).
		keyIdentifier(b, valueX509v3, cert.Raw)
	case RefThumbprint:
		// X.509 Token Profile 1.1 ThumbprintSHA1: SHA-1 of the DER
		// certificate.
		sum := sha1.Sum(cert.Raw)
		keyIdentifier(b, valueThumbprint, sum[:])
	default:
		return fmt.Errorf("%w: key reference %q", ErrOptions, mode)
	}
	return nil
}

// keyIdentifier writes a wsse:KeyIdentifier with the Base64Binary
// EncodingType that BSP 1.1 (R3071) requires.
func keyIdentifier(b *buf, valueType string, v []byte) {
	b.open("wsse:KeyIdentifier")
	b.attr("EncodingType", encodingBase64)
	b.attr("ValueType", valueType)
	b.end()
	b.b64raw(v)
	b.close("wsse:KeyIdentifier")
}

// issuerName formats the issuer in RFC 4514 order (most specific RDN
// first), as Java's X500Principal.getName() prints it for WSS4J.
func issuerName(c *x509.Certificate) string {
	if dn, err := trust.DNFromRaw(c.RawIssuer); err == nil {
		return dn.String()
	}
	return c.Issuer.String()
}
