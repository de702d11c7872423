package xmlscan

import (
	"errors"
	"fmt"
	"slices"
)

// Limits bounds the resources one document may claim (security.md 1B: B2
// quadratic blowup, B7 deep nesting, B8 width attacks, B9 oversized base64).
// Every limit is inclusive: a document exactly at a limit passes, one past
// it fails with the matching KindLimit* kind. A zero field means "use the
// default" (DefaultLimits); negative values are invalid.
type Limits struct {
	// MaxBytes bounds the whole input, BOM and XML declaration included.
	// Default 8 MiB.
	MaxBytes int
	// MaxDepth bounds element nesting; the root element is at depth 1.
	// Default 128, far below etree's 1024 and any stack concern
	// (security.md B7: a Go stack overflow cannot be recovered).
	MaxDepth int
	// MaxAttrs bounds the attributes of one element, namespace
	// declarations not counted (they have their own limits). Default 128.
	MaxAttrs int
	// MaxNameLen bounds the byte length of a qualified name (prefix, colon
	// and local part) of an element or attribute. Default 256.
	MaxNameLen int
	// MaxNSDeclsPerElement bounds the namespace declarations (xmlns and
	// xmlns:p attributes) on one element. Default 32.
	MaxNSDeclsPerElement int
	// MaxNSDecls bounds the namespace declarations in the whole document.
	// Default 4096 (stacks that redeclare a default namespace on every
	// element need a generous total).
	MaxNSDecls int
	// MaxTextLen bounds the character data directly inside one element:
	// all its text and CDATA segments together, counted in raw bytes.
	// Default 4 MiB.
	MaxTextLen int
	// MaxAttrValueLen bounds one raw attribute value (namespace
	// declarations included). Default 64 KiB.
	MaxAttrValueLen int
	// MaxElements bounds the number of elements in the document.
	// Default 100000.
	MaxElements int
	// MaxBase64Len replaces MaxTextLen for the character data of elements
	// in the XML Signature, XML Encryption and WS-Security secext
	// namespaces (ds:SignatureValue, xenc:CipherValue,
	// wsse:BinarySecurityToken, ...), so that those can be bounded
	// separately before anything decodes them (security.md B9).
	// Default 4 MiB.
	MaxBase64Len int
	// MaxReferences bounds ds:Reference elements in the document. Default 64.
	MaxReferences int
	// MaxTransforms bounds ds:Transform elements in the document. Default 128.
	MaxTransforms int
	// MaxSignatures bounds ds:Signature elements in the document. Default 8.
	MaxSignatures int
	// MaxEncryptedKeys bounds xenc:EncryptedKey elements in the document.
	// Each one can make the receiver unwrap a key with its private key
	// (about a millisecond of RSA), and anyone with the receiver's
	// certificate can make valid ones. Default 4: one per message is the
	// norm (WSS4J, CXF, .NET encrypt every part under one key), a few
	// cover a signature key and an encryption key.
	MaxEncryptedKeys int
	// MaxEncryptedData bounds xenc:EncryptedData elements in the document.
	// Each one decrypted makes the receiver copy the message and gate the
	// plaintext in it (ScanReplace). Default 32, the default MIME part
	// count, so that every attachment of a package may be encrypted.
	MaxEncryptedData int
}

// DefaultLimits returns the documented defaults, sized for SOAP messages
// from a few KiB to several MiB.
func DefaultLimits() Limits {
	return Limits{
		MaxBytes:             8 << 20,
		MaxDepth:             128,
		MaxAttrs:             128,
		MaxNameLen:           256,
		MaxNSDeclsPerElement: 32,
		MaxNSDecls:           4096,
		MaxTextLen:           4 << 20,
		MaxAttrValueLen:      64 << 10,
		MaxElements:          100000,
		MaxBase64Len:         4 << 20,
		MaxReferences:        64,
		MaxTransforms:        128,
		MaxSignatures:        8,
		MaxEncryptedKeys:     4,
		MaxEncryptedData:     32,
	}
}

// fields lists the limits by name, for defaulting and validation.
func (l *Limits) fields() []struct {
	name string
	v    *int
	def  int
} {
	d := DefaultLimits()
	return []struct {
		name string
		v    *int
		def  int
	}{
		{"MaxBytes", &l.MaxBytes, d.MaxBytes},
		{"MaxDepth", &l.MaxDepth, d.MaxDepth},
		{"MaxAttrs", &l.MaxAttrs, d.MaxAttrs},
		{"MaxNameLen", &l.MaxNameLen, d.MaxNameLen},
		{"MaxNSDeclsPerElement", &l.MaxNSDeclsPerElement, d.MaxNSDeclsPerElement},
		{"MaxNSDecls", &l.MaxNSDecls, d.MaxNSDecls},
		{"MaxTextLen", &l.MaxTextLen, d.MaxTextLen},
		{"MaxAttrValueLen", &l.MaxAttrValueLen, d.MaxAttrValueLen},
		{"MaxElements", &l.MaxElements, d.MaxElements},
		{"MaxBase64Len", &l.MaxBase64Len, d.MaxBase64Len},
		{"MaxReferences", &l.MaxReferences, d.MaxReferences},
		{"MaxTransforms", &l.MaxTransforms, d.MaxTransforms},
		{"MaxSignatures", &l.MaxSignatures, d.MaxSignatures},
		{"MaxEncryptedKeys", &l.MaxEncryptedKeys, d.MaxEncryptedKeys},
		{"MaxEncryptedData", &l.MaxEncryptedData, d.MaxEncryptedData},
	}
}

// Validate reports every negative field at once.
func (l Limits) Validate() error {
	var errs []error
	for _, f := range l.fields() {
		if *f.v < 0 {
			errs = append(errs, fmt.Errorf("xmlscan: limit %s must not be negative (got %d)", f.name, *f.v))
		}
	}
	return errors.Join(errs...)
}

// withDefaults returns l with every zero field replaced by its default.
func (l Limits) withDefaults() Limits {
	for _, f := range l.fields() {
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	return l
}

// Name is an expanded name: a namespace URI and a local name.
type Name struct {
	Space string
	Local string
}

// SecurityHeader is the expanded name of the wsse:Security header.
var SecurityHeader = Name{Space: NamespaceWSSE, Local: "Security"}

// soapElementOnly are the SOAP 1.1 and 1.2 Envelope and Header elements,
// whose content DefaultConfig restricts to elements and white space
// (Config.ElementOnly).
var soapElementOnly = []Name{
	{Space: NamespaceSOAP11, Local: "Envelope"}, {Space: NamespaceSOAP11, Local: "Header"},
	{Space: NamespaceSOAP12, Local: "Envelope"}, {Space: NamespaceSOAP12, Local: "Header"},
}

// Config configures a Scanner.
type Config struct {
	// Limits; zero fields take their defaults.
	Limits Limits
	// NoCommentsIn lists elements inside which comments and CDATA sections
	// are rejected anywhere in the subtree (KindProtectedComment,
	// KindProtectedCDATA). A comment splits text for one XML processor and
	// not for another (security.md A9, Duo 2018, xml-crypto CVE-2025-29775),
	// so the gate keeps them out of the Security header. Elements elsewhere
	// still carry Flag{Comment,CDATA} so engines can reject them inside
	// signed parts.
	NoCommentsIn []Name
	// ElementOnly lists elements whose own content (not their
	// descendants') may hold only child elements and white space: no other
	// character data, no reference (not even to a white-space character),
	// no CDATA section and no comment (KindElementOnly). SOAP gives the
	// Envelope and the Header element content only (SOAP 1.1 §4.1.1,
	// §4.2; SOAP 1.2 Part 1 §5.1, §5.2), but XML processors still report
	// text, CDATA and comments there, and no signature covers them: a
	// backend may read text between the Header and the Body, or a CDATA
	// section carrying a second <Body>, that wssgw never verified.
	ElementOnly []Name
}

// DefaultConfig returns the default limits with comments and CDATA
// forbidden inside the wsse:Security header, and the SOAP 1.1 and 1.2
// Envelope and Header restricted to element content.
func DefaultConfig() Config {
	return Config{
		Limits:       DefaultLimits(),
		NoCommentsIn: []Name{SecurityHeader},
		ElementOnly:  slices.Clone(soapElementOnly),
	}
}
