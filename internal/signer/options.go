package signer

import (
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"time"

	wcrypto "github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// Errors returned by Secure; each error wraps exactly one of them.
var (
	// ErrOptions: an option is missing, unknown or inconsistent.
	ErrOptions = errors.New("signer: bad options")
	// ErrKey: the key or a certificate cannot be used as asked.
	ErrKey = errors.New("signer: unusable key")
	// ErrEnvelope: the input is not a plain SOAP envelope this package
	// can secure (fails the xmlscan gate, not SOAP, no Body, ...).
	ErrEnvelope = errors.New("signer: bad envelope")
	// ErrSecured: the envelope already has a wsse:Security header.
	// WSS 1.1 SOAP Message Security §5 allows one Security header per
	// actor/role, and this package does not merge into an existing one.
	ErrSecured = errors.New("signer: envelope already has a wsse:Security header")
)

// Key reference modes for KeyReference and EncryptKeyReference
// (WSS X.509 Token Profile 1.1 §3.3).
const (
	RefBST          = "bst"           // BinarySecurityToken + STR direct Reference (§3.3.2)
	RefIssuerSerial = "issuer-serial" // ds:X509Data/X509IssuerSerial (§3.3.3)
	RefSKI          = "ski"           // KeyIdentifier #X509SubjectKeyIdentifier (§3.3.1)
	RefThumbprint   = "thumbprint"    // KeyIdentifier #ThumbprintSHA1 (WSS 1.1 §7.3)
	RefX509v3       = "x509v3"        // KeyIdentifier #X509v3 holding the certificate (§3.2)
)

// Options says how to secure a message. Start from DefaultOptions, which
// sets the booleans whose zero value is not the default.
type Options struct {
	Signer      crypto.Signer
	Certificate *x509.Certificate
	Chain       []*x509.Certificate // informational; only the leaf is sent

	// SignatureAlgorithm is a SignatureMethod URI; "" picks RSA-SHA256 for
	// RSA keys, ECDSA-SHA256/384/512 for P-256/P-384/P-521, Ed25519.
	SignatureAlgorithm string
	// DigestAlgorithm is a DigestMethod URI; "" is SHA-256.
	DigestAlgorithm string
	// TTL is the Timestamp lifetime: 0 means 5 minutes, <0 no Timestamp.
	TTL time.Duration
	Now func() time.Time // default time.Now

	// KeyReference is how KeyInfo names the signing certificate: RefBST
	// (default), RefIssuerSerial, RefSKI, RefThumbprint or RefX509v3.
	KeyReference string
	// SignHeaders are extra header blocks to sign when present, e.g.
	// {http://www.w3.org/2005/08/addressing}To.
	SignHeaders []xml.Name
	// InclusivePrefixes emits ec:InclusiveNamespaces PrefixList on every
	// exc-c14n method, as WSS4J does.
	InclusivePrefixes bool

	// EncryptFor, if set, is the RSA certificate the Body content is
	// encrypted for, after signing.
	EncryptFor          *x509.Certificate
	DataAlgorithm       string // "" is AES-256-GCM
	KeyTransport        string // "" is rsa-oaep-mgf1p; or XMLEnc 1.1 rsa-oaep (SHA-1, MGF1-SHA1)
	EncryptKeyReference string // "" is RefIssuerSerial

	// SignatureConfirmation adds a signed wsse11:SignatureConfirmation per
	// value of Confirm, the SignatureValues of the request being answered,
	// or one without Value when Confirm is empty (WSS 1.1 §8.5).
	SignatureConfirmation bool
	Confirm               [][]byte

	// MustUnderstand sets mustUnderstand on wsse:Security ("1" for SOAP
	// 1.1, "true" for SOAP 1.2, as WSS4J writes them).
	MustUnderstand bool
	// XOP, if set, makes the envelope the root part of an MTOM package
	// whose xop:Includes name the parts XOP opens: every digest covers the
	// XOP infoset, each include replaced by its part's base64 (XOP 1.0
	// §4), as a stock receiver verifies it. The parts are not changed.
	// Encrypting such an envelope is not supported.
	XOP XOPParts
	// SwA, if set, makes the envelope the root part of an SwA package:
	// each part gets a "cid:" Reference with the
	// Attachment-Content-Signature-Transform. The parts are not changed.
	// SwAMaxXML bounds an XML part held for canonicalization (0: 8 MiB).
	SwA       []SwAPart
	SwAMaxXML int64
	Rand      io.Reader // default crypto/rand
	// Gate scans the input and every assembled message; nil is xmlscan's
	// default limits (8 MiB). Larger messages need a gate with larger
	// byte, text and base64 limits.
	Gate *xmlscan.Scanner
}

// DefaultOptions returns Options with the defaults whose zero value differs:
// InclusivePrefixes and MustUnderstand on.
func DefaultOptions() Options {
	return Options{InclusivePrefixes: true, MustUnderstand: true}
}

// defaultGate is xmlscan's default configuration.
var defaultGate = func() *xmlscan.Scanner {
	s, err := xmlscan.NewScanner(xmlscan.DefaultConfig())
	if err != nil {
		panic(err)
	}
	return s
}()

// resolved is Options after defaults and validation.
type resolved struct {
	Options
	dataKeyLen int
}

func (o Options) resolve() (*resolved, error) {
	r := &resolved{Options: o}
	if o.Signer == nil || o.Certificate == nil {
		return nil, fmt.Errorf("%w: Signer and Certificate are required", ErrOptions)
	}
	if eq, ok := o.Signer.Public().(interface{ Equal(crypto.PublicKey) bool }); !ok || !eq.Equal(o.Certificate.PublicKey) {
		return nil, fmt.Errorf("%w: Certificate does not match Signer", ErrKey)
	}
	if r.SignatureAlgorithm == "" {
		a, err := defaultSignatureAlgorithm(o.Signer.Public())
		if err != nil {
			return nil, err
		}
		r.SignatureAlgorithm = a
	}
	if _, ok := sigAlgs[r.SignatureAlgorithm]; !ok {
		return nil, fmt.Errorf("%w: signature algorithm %q", ErrOptions, r.SignatureAlgorithm)
	}
	if r.DigestAlgorithm == "" {
		r.DigestAlgorithm = algSHA256
	}
	if err := checkDigest(r.DigestAlgorithm); err != nil {
		return nil, err
	}
	if r.TTL == 0 {
		r.TTL = 5 * time.Minute
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	if r.Rand == nil {
		r.Rand = rand.Reader
	}
	if r.Gate == nil {
		r.Gate = defaultGate
	}
	if r.KeyReference == "" {
		r.KeyReference = RefBST
	}
	if err := checkRef(r.KeyReference, o.Certificate); err != nil {
		return nil, err
	}
	if o.EncryptFor != nil && (o.XOP != nil || len(o.SwA) > 0) {
		return nil, fmt.Errorf("%w: encrypting an MTOM or SwA envelope is not supported", ErrOptions)
	}
	if o.EncryptFor != nil {
		if r.DataAlgorithm == "" {
			r.DataAlgorithm = algAES256GCM
		}
		n, err := dataKeySize(r.DataAlgorithm)
		if err != nil {
			return nil, err
		}
		r.dataKeyLen = n
		if r.KeyTransport == "" {
			r.KeyTransport = algRSAOAEPMGF1P
		}
		if r.KeyTransport != algRSAOAEPMGF1P && r.KeyTransport != wcrypto.AlgRSAOAEP {
			return nil, fmt.Errorf("%w: key transport algorithm %q", ErrOptions, r.KeyTransport)
		}
		if r.EncryptKeyReference == "" {
			r.EncryptKeyReference = RefIssuerSerial
		}
		if err := checkRef(r.EncryptKeyReference, o.EncryptFor); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func checkRef(mode string, c *x509.Certificate) error {
	switch mode {
	case RefBST, RefIssuerSerial, RefThumbprint, RefX509v3:
		return nil
	case RefSKI:
		// X.509 Token Profile 1.1 §3.3.1 defines the SKI only for v3
		// certificates.
		if c.Version != 3 {
			return fmt.Errorf("%w: ski reference needs an X.509 v3 certificate", ErrKey)
		}
		return nil
	}
	return fmt.Errorf("%w: key reference %q", ErrOptions, mode)
}
