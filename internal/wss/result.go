package wss

import (
	"encoding/xml"
	"time"

	"github.com/wssgw/wssgw/internal/soap"
	"github.com/wssgw/wssgw/internal/trust"
)

// Result is what an engine proved about one message. Element positions are
// byte offsets of start tags in Document, the final plaintext envelope: a
// fact about an element is a fact about the bytes at that offset, which is
// how required parts are matched by node identity and never by "an element
// with that id exists somewhere" (DESIGN.md §5.3).
type Result struct {
	Version soap.Version
	// Document is the envelope after decryption, Security header included.
	Document []byte
	// Body is the start offset of the one soap:Body.
	Body int
	// Security is the byte span of the wsse:Security header processed, or
	// {-1,-1} when the message had none.
	Security [2]int
	// Headers are the SOAP header blocks other than our Security header
	// (Security headers for other roles included), in document order.
	Headers []Part
	// Attributes are the attributes of soap:Envelope and soap:Header other
	// than namespace declarations, in document order: content of the
	// envelope that no signature can cover (see Policy.unsigned).
	Attributes []Attribute
	// Comments are the spans [start, end) of the comments in Document, in
	// document order. Signed parts and Security headers hold none (the
	// engine and the gate refuse them); Forward leaves every one out.
	Comments [][2]int
	// Stripped is what Verify left out of the forwarded bytes besides our
	// Security header (Forward), for the metrics and the debug log.
	Stripped []Unsigned
	// Timestamp is the verified wsu:Timestamp, if any.
	Timestamp *Timestamp
	// Username is the verified wsse:UsernameToken, if any.
	Username *UsernameToken
	// Token is the start offset of the BinarySecurityToken a signature used
	// (-1 when none).
	Token int
	// Signatures are the verified signatures, in header order.
	Signatures []Signature
	// Confirmations are the Value attributes of the
	// wsse11:SignatureConfirmation elements of the Security header (WSS 1.1
	// §8.5), in header order, as sent (base64 text); "" for one without a
	// Value, which says the request it answers was not signed. Recorded
	// whether or not a signature covers them: a requester checks that with
	// ConfirmationsSignedByTrusted.
	Confirmations []string
	// ConfirmationStarts are the start offsets of those elements, index for
	// index with Confirmations.
	ConfirmationStarts []int
	// Decrypted lists what was decrypted.
	Decrypted []Decryption
	// Attachments has one fact per attachment of an MTOM/SwA package, in
	// package order (nil for a plain message).
	Attachments []AttachmentFact
	// Consumed are the Content-IDs of attachments the Security header
	// consumed (ciphertext decrypted into the document, a token's
	// certificate): the backend must not get them. With keepSecurityHeader
	// the parts the forwarded header still names are not listed.
	Consumed []string
	// Algorithms lists every algorithm URI the message used, for the
	// per-policy usage counters.
	Algorithms []AlgorithmUse
	// GateTime and DecryptTime are the time the engine spent gating
	// (including re-gating after decryption) and decrypting, for the stage
	// histograms.
	GateTime, DecryptTime time.Duration
	// ProcessTime is the engine's whole time; PolicyTime that of Check.
	ProcessTime, PolicyTime time.Duration
	// MatchTime is the template automaton's matching time, and Lookup its
	// result (a metrics label: hit, no_template, rejected, disabled,
	// not_applicable), empty when no automaton ran.
	MatchTime time.Duration
	Lookup    string
}

// Part is an element of the document: its expanded name, the offset of its
// start tag and the offset just past its end tag.
type Part struct {
	Name       xml.Name
	Start, End int
}

// Attribute is an attribute of soap:Envelope or soap:Header: its expanded
// name and its bytes in Document, [start, end), from the white space before
// its name to its closing quote, so that removing them leaves a well-formed
// start tag.
type Attribute struct {
	Name xml.Name
	Span [2]int
}

// Timestamp is a checked wsu:Timestamp.
type Timestamp struct {
	Start            int
	Created, Expires time.Time // Expires is zero when absent
}

// UsernameToken is a checked wsse:UsernameToken.
type UsernameToken struct {
	Start    int
	Username string
	Digest   bool   // PasswordDigest (else PasswordText)
	Nonce    []byte // raw nonce, nil when absent
	Created  time.Time
}

// Key reference kinds (WSS X.509 Token Profile 1.1 §3.2), metric labels.
const (
	KeyRefBST          = "bst"
	KeyRefIssuerSerial = "issuer_serial"
	KeyRefSKI          = "ski"
	KeyRefThumbprint   = "thumbprint"
	KeyRefEncryptedKey = "encrypted_key"
	KeyRefX509Data     = "x509data"
	// KeyRefX509KeyIdentifier is a wsse:KeyIdentifier of ValueType #X509v3
	// holding the certificate itself (WSS4J X509_KEY_IDENTIFIER): carried
	// like a BinarySecurityToken, trusted only through the trust store.
	KeyRefX509KeyIdentifier = "x509_key_identifier"
)

// Signature is a verified ds:Signature: its SignedInfo verified with a key
// from the trust store (or a key the message proved it holds, for HMAC),
// and every Reference's digest checked.
type Signature struct {
	// Signer is the trusted identity; nil for an HMAC signature whose key
	// came from an EncryptedKey (then SignerOf names no one).
	Signer       *trust.Identity
	KeyReference string
	Method       string // SignatureMethod URI
	C14N         string // CanonicalizationMethod URI
	KeyBits      int
	// Covered are the start offsets of the elements the References
	// resolved to, after any later decryption moved them.
	Covered []int
	// SignedInfoDigest is SHA-256 of the canonical SignedInfo that was
	// verified: with SignatureValue, the replay key (DESIGN.md §5.7).
	SignedInfoDigest [32]byte
	// SignatureValue is the verified ds:SignatureValue, decoded octets.
	// The replay key is derived from what was signed and this value,
	// never from the token that carried the key (checkReplay).
	SignatureValue []byte
}

// Decryption is one decrypted EncryptedData.
type Decryption struct {
	// Start is the element now holding the plaintext: the decrypted
	// element (Type Element), or the parent (Type Content).
	Start        int
	Content      bool
	Header       bool // a wsse11:EncryptedHeader or an encrypted header block
	Algorithm    string
	KeyTransport string
}

// Algorithm kinds for AlgorithmUse.
const (
	UseSignature    = "signature"
	UseDigest       = "digest"
	UseC14N         = "c14n"
	UseKeyTransport = "key_transport"
	UseData         = "data"
	UseKeyReference = "key_reference"
	UseKeySize      = "key_size"
)

// AlgorithmUse is one use of an algorithm (or a key reference kind or key
// size), counted per policy so operators see who still sends SHA-1 or CBC.
type AlgorithmUse struct {
	Kind  string
	Value string
}

// Covered reports whether some verified signature covers the element at
// start.
func (r *Result) Covered(start int) bool {
	for _, s := range r.Signatures {
		for _, c := range s.Covered {
			if c == start {
				return true
			}
		}
	}
	return false
}

// SignedByTrusted reports whether a verified signature with a trusted X.509
// signer covers the element at start. An HMAC signature keyed by an
// EncryptedKey does not count: wssgw unwrapped that key with its own
// private key, so anyone who has wssgw's certificate can make one (WSS 1.1
// §7.5 binds the EncryptedKey to the recipient, not to the sender), and a
// part it covers is not authenticated. That is also why such a signature
// never satisfies "require: [signature]" (Check).
func (r *Result) SignedByTrusted(start int) bool {
	for _, s := range r.Signatures {
		if s.Signer == nil {
			continue
		}
		for _, c := range s.Covered {
			if c == start {
				return true
			}
		}
	}
	return false
}

// ConfirmationsSignedByTrusted reports whether the message has at least
// one SignatureConfirmation and a trusted X.509 signature covers every
// one: an unsigned confirmation proves nothing, since anyone on the path
// could have added or copied it (WSS 1.1 §8.5 has the responder sign
// them).
func (r *Result) ConfirmationsSignedByTrusted() bool {
	if len(r.ConfirmationStarts) == 0 {
		return false
	}
	for _, s := range r.ConfirmationStarts {
		if !r.SignedByTrusted(s) {
			return false
		}
	}
	return true
}

// DecryptedAt reports whether the element at start arrived encrypted.
func (r *Result) DecryptedAt(start int) bool {
	for _, d := range r.Decrypted {
		if d.Start == start {
			return true
		}
	}
	return false
}

// Signer returns the identity of the first signature with a trusted X.509
// signer, or nil.
func (r *Result) Signer() *trust.Identity {
	for _, s := range r.Signatures {
		if s.Signer != nil {
			return s.Signer
		}
	}
	return nil
}
