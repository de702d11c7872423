package crypto

import (
	"crypto"
	"errors"
	"fmt"
	"slices"
)

// Algorithm URIs (XMLDSig 1.1 §6, XMLEnc 1.1 §5, RFC 9231). Only the
// algorithms wssgw implements are named; any other URI is unsupported.
const (
	// Digests (XMLDSig 1.1 §6.2, XMLEnc 1.1 §5.8, RFC 9231 §2.1).
	AlgDigestSHA1   = "http://www.w3.org/2000/09/xmldsig#sha1"
	AlgDigestSHA224 = "http://www.w3.org/2001/04/xmldsig-more#sha224"
	AlgDigestSHA256 = "http://www.w3.org/2001/04/xmlenc#sha256"
	AlgDigestSHA384 = "http://www.w3.org/2001/04/xmldsig-more#sha384"
	AlgDigestSHA512 = "http://www.w3.org/2001/04/xmlenc#sha512"

	// RSASSA-PKCS1-v1_5 signatures (XMLDSig 1.1 §6.4.2, RFC 9231 §2.3.2).
	AlgRSASHA1   = "http://www.w3.org/2000/09/xmldsig#rsa-sha1"
	AlgRSASHA224 = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha224"
	AlgRSASHA256 = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"
	AlgRSASHA384 = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha384"
	AlgRSASHA512 = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512"

	// RSASSA-PSS without parameters (RFC 6931 §2.3.10): MGF1 with the
	// same hash and a salt as long as the hash.
	AlgRSAPSSSHA256 = "http://www.w3.org/2007/05/xmldsig-more#sha256-rsa-MGF1"
	AlgRSAPSSSHA384 = "http://www.w3.org/2007/05/xmldsig-more#sha384-rsa-MGF1"
	AlgRSAPSSSHA512 = "http://www.w3.org/2007/05/xmldsig-more#sha512-rsa-MGF1"

	// ECDSA (XMLDSig 1.1 §6.4.3, RFC 9231 §2.3.6).
	AlgECDSASHA1   = "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha1"
	AlgECDSASHA224 = "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha224"
	AlgECDSASHA256 = "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256"
	AlgECDSASHA384 = "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha384"
	AlgECDSASHA512 = "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha512"

	// Ed25519, PureEdDSA of RFC 8032 over the canonical SignedInfo (RFC 9231).
	AlgEd25519 = "http://www.w3.org/2021/04/xmldsig-more#eddsa-ed25519"

	// HMAC (XMLDSig 1.1 §6.3, RFC 9231 §2.2).
	AlgHMACSHA1   = "http://www.w3.org/2000/09/xmldsig#hmac-sha1"
	AlgHMACSHA224 = "http://www.w3.org/2001/04/xmldsig-more#hmac-sha224"
	AlgHMACSHA256 = "http://www.w3.org/2001/04/xmldsig-more#hmac-sha256"
	AlgHMACSHA384 = "http://www.w3.org/2001/04/xmldsig-more#hmac-sha384"
	AlgHMACSHA512 = "http://www.w3.org/2001/04/xmldsig-more#hmac-sha512"

	// Key transport (XMLEnc 1.1 §5.5).
	AlgRSA15        = "http://www.w3.org/2001/04/xmlenc#rsa-1_5"
	AlgRSAOAEPMGF1P = "http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p"
	AlgRSAOAEP      = "http://www.w3.org/2009/xmlenc11#rsa-oaep"

	// Mask generation functions for AlgRSAOAEP (XMLEnc 1.1 §5.5.2).
	AlgMGF1SHA1   = "http://www.w3.org/2009/xmlenc11#mgf1sha1"
	AlgMGF1SHA224 = "http://www.w3.org/2009/xmlenc11#mgf1sha224"
	AlgMGF1SHA256 = "http://www.w3.org/2009/xmlenc11#mgf1sha256"
	AlgMGF1SHA384 = "http://www.w3.org/2009/xmlenc11#mgf1sha384"
	AlgMGF1SHA512 = "http://www.w3.org/2009/xmlenc11#mgf1sha512"

	// Symmetric key wrap, RFC 3394 (XMLEnc 1.1 §5.7.2).
	AlgKWAES128 = "http://www.w3.org/2001/04/xmlenc#kw-aes128"
	AlgKWAES192 = "http://www.w3.org/2001/04/xmlenc#kw-aes192"
	AlgKWAES256 = "http://www.w3.org/2001/04/xmlenc#kw-aes256"

	// Block encryption (XMLEnc 1.1 §5.2.2 CBC, §5.2.4 GCM).
	AlgAES128CBC = "http://www.w3.org/2001/04/xmlenc#aes128-cbc"
	AlgAES192CBC = "http://www.w3.org/2001/04/xmlenc#aes192-cbc"
	AlgAES256CBC = "http://www.w3.org/2001/04/xmlenc#aes256-cbc"
	AlgAES128GCM = "http://www.w3.org/2009/xmlenc11#aes128-gcm"
	AlgAES192GCM = "http://www.w3.org/2009/xmlenc11#aes192-gcm"
	AlgAES256GCM = "http://www.w3.org/2009/xmlenc11#aes256-gcm"
)

// Sentinel errors of the algorithm primitives. As for the certificate
// errors, every error wraps exactly one sentinel.
var (
	ErrUnsupportedAlgorithm = errors.New("unsupported algorithm")
	ErrAlgorithmNotAllowed  = errors.New("algorithm not allowed")
	ErrAlgorithmKey         = errors.New("key type does not match algorithm")
	ErrSignature            = errors.New("signature invalid")
	// ErrDecrypt is the one error of every decryption and unwrap failure,
	// whatever failed (length, padding, tag, OAEP encoding): distinct
	// failures would be an oracle (Jager–Somorovsky, CCS 2011; Bleichenbacher).
	ErrDecrypt = errors.New("decryption failed")
	// ErrEncrypt is a failure to produce a ciphertext (no randomness).
	ErrEncrypt = errors.New("encryption failed")
)

// AlgorithmClass is the role an algorithm URI may play. A URI is only valid
// in its own role: a digest URI as SignatureMethod, or a key wrap URI as
// the EncryptionMethod of data, is an algorithm substitution (NDSS 2013 "One
// Bad Apple"; CXF CVE-2012-5575) and is refused.
type AlgorithmClass int

// Algorithm classes.
const (
	ClassSignature AlgorithmClass = iota + 1
	ClassDigest
	ClassKeyTransport
	ClassKeyWrap
	ClassBlockCipher
	// ClassMGF is the xenc11:MGF parameter of AlgRSAOAEP, not a method of
	// its own; it is never in an AllowList.
	ClassMGF
)

// String returns the class name (for messages).
func (c AlgorithmClass) String() string {
	switch c {
	case ClassSignature:
		return "signature"
	case ClassDigest:
		return "digest"
	case ClassKeyTransport:
		return "key-transport"
	case ClassKeyWrap:
		return "key-wrap"
	case ClassBlockCipher:
		return "block-cipher"
	case ClassMGF:
		return "mgf"
	}
	return fmt.Sprintf("AlgorithmClass(%d)", int(c))
}

type sigKind uint8

const (
	sigNone sigKind = iota
	sigRSA
	sigRSAPSS
	sigECDSA
	sigEd25519
	sigHMAC
)

// algInfo is everything the package knows of one URI. The table is the only
// place an algorithm is defined, so classification, policy, labels and the
// primitives cannot disagree.
type algInfo struct {
	class   AlgorithmClass
	label   string      // metric label, a closed set
	hash    crypto.Hash // digest, signature hash, MGF hash
	sig     sigKind
	keySize int  // bytes: AES key (block cipher) or KEK (key wrap)
	gcm     bool // block cipher mode
}

var algs = map[string]algInfo{
	AlgDigestSHA1:   {class: ClassDigest, label: "sha1", hash: crypto.SHA1},
	AlgDigestSHA224: {class: ClassDigest, label: "sha224", hash: crypto.SHA224},
	AlgDigestSHA256: {class: ClassDigest, label: "sha256", hash: crypto.SHA256},
	AlgDigestSHA384: {class: ClassDigest, label: "sha384", hash: crypto.SHA384},
	AlgDigestSHA512: {class: ClassDigest, label: "sha512", hash: crypto.SHA512},

	AlgRSASHA1:   {class: ClassSignature, label: "rsa-sha1", hash: crypto.SHA1, sig: sigRSA},
	AlgRSASHA224: {class: ClassSignature, label: "rsa-sha224", hash: crypto.SHA224, sig: sigRSA},
	AlgRSASHA256: {class: ClassSignature, label: "rsa-sha256", hash: crypto.SHA256, sig: sigRSA},
	AlgRSASHA384: {class: ClassSignature, label: "rsa-sha384", hash: crypto.SHA384, sig: sigRSA},
	AlgRSASHA512: {class: ClassSignature, label: "rsa-sha512", hash: crypto.SHA512, sig: sigRSA},

	AlgRSAPSSSHA256: {class: ClassSignature, label: "rsa-pss-sha256", hash: crypto.SHA256, sig: sigRSAPSS},
	AlgRSAPSSSHA384: {class: ClassSignature, label: "rsa-pss-sha384", hash: crypto.SHA384, sig: sigRSAPSS},
	AlgRSAPSSSHA512: {class: ClassSignature, label: "rsa-pss-sha512", hash: crypto.SHA512, sig: sigRSAPSS},

	AlgECDSASHA1:   {class: ClassSignature, label: "ecdsa-sha1", hash: crypto.SHA1, sig: sigECDSA},
	AlgECDSASHA224: {class: ClassSignature, label: "ecdsa-sha224", hash: crypto.SHA224, sig: sigECDSA},
	AlgECDSASHA256: {class: ClassSignature, label: "ecdsa-sha256", hash: crypto.SHA256, sig: sigECDSA},
	AlgECDSASHA384: {class: ClassSignature, label: "ecdsa-sha384", hash: crypto.SHA384, sig: sigECDSA},
	AlgECDSASHA512: {class: ClassSignature, label: "ecdsa-sha512", hash: crypto.SHA512, sig: sigECDSA},

	AlgEd25519: {class: ClassSignature, label: "ed25519", sig: sigEd25519},

	AlgHMACSHA1:   {class: ClassSignature, label: "hmac-sha1", hash: crypto.SHA1, sig: sigHMAC},
	AlgHMACSHA224: {class: ClassSignature, label: "hmac-sha224", hash: crypto.SHA224, sig: sigHMAC},
	AlgHMACSHA256: {class: ClassSignature, label: "hmac-sha256", hash: crypto.SHA256, sig: sigHMAC},
	AlgHMACSHA384: {class: ClassSignature, label: "hmac-sha384", hash: crypto.SHA384, sig: sigHMAC},
	AlgHMACSHA512: {class: ClassSignature, label: "hmac-sha512", hash: crypto.SHA512, sig: sigHMAC},

	// RSA-1.5 is legacy for Bleichenbacher (WSS4J CVE-2011-2487,
	// CVE-2015-0226). OAEP-mgf1p is not: its fixed SHA-1 (as OAEP hash
	// and MGF1 hash) needs no collision resistance.
	AlgRSA15:        {class: ClassKeyTransport, label: "rsa-1_5"},
	AlgRSAOAEPMGF1P: {class: ClassKeyTransport, label: "rsa-oaep-mgf1p"},
	AlgRSAOAEP:      {class: ClassKeyTransport, label: "rsa-oaep"},

	AlgMGF1SHA1:   {class: ClassMGF, label: "mgf1-sha1", hash: crypto.SHA1},
	AlgMGF1SHA224: {class: ClassMGF, label: "mgf1-sha224", hash: crypto.SHA224},
	AlgMGF1SHA256: {class: ClassMGF, label: "mgf1-sha256", hash: crypto.SHA256},
	AlgMGF1SHA384: {class: ClassMGF, label: "mgf1-sha384", hash: crypto.SHA384},
	AlgMGF1SHA512: {class: ClassMGF, label: "mgf1-sha512", hash: crypto.SHA512},

	AlgKWAES128: {class: ClassKeyWrap, label: "kw-aes128", keySize: 16},
	AlgKWAES192: {class: ClassKeyWrap, label: "kw-aes192", keySize: 24},
	AlgKWAES256: {class: ClassKeyWrap, label: "kw-aes256", keySize: 32},

	// CBC is legacy for the padding/parsing oracle (Jager–Somorovsky,
	// CCS 2011): it has no integrity.
	AlgAES128CBC: {class: ClassBlockCipher, label: "aes128-cbc", keySize: 16},
	AlgAES192CBC: {class: ClassBlockCipher, label: "aes192-cbc", keySize: 24},
	AlgAES256CBC: {class: ClassBlockCipher, label: "aes256-cbc", keySize: 32},
	AlgAES128GCM: {class: ClassBlockCipher, label: "aes128-gcm", keySize: 16, gcm: true},
	AlgAES192GCM: {class: ClassBlockCipher, label: "aes192-gcm", keySize: 24, gcm: true},
	AlgAES256GCM: {class: ClassBlockCipher, label: "aes256-gcm", keySize: 32, gcm: true},
}

// LabelOther is AlgorithmLabel of a URI this package does not implement.
const LabelOther = "other"

// Classify returns the class of a known algorithm URI. The match is exact
// (case and all): XML Security URIs are compared as strings.
func Classify(uri string) (AlgorithmClass, bool) {
	a, ok := algs[uri]
	return a.class, ok
}

// DefaultAllowed returns the modern algorithm set (a fresh slice): SHA-2
// digests and signatures of at least 256 bits, RSA-PSS, ECDSA, Ed25519,
// HMAC-SHA2, RSA-OAEP key transport and AES-GCM. SHA-224 and the 192-bit
// AES variants are left out because no profile in use needs them
// (WS-SecurityPolicy algorithm suites use 128 and 256). AES key wrap
// (kw-aes*, RFC 3394) is left out because nothing unwraps it: a policy
// configures no key-encryption keys and an EncryptedKey's method is held to
// the key-transport class. Nor is there a stock sender to interoperate
// with: WSS4J 4.0 writes kw-aes only under an ECDH-ES KeyAgreementMethod
// (xenc11, not implemented here), and its receiver, given kw-aes with a
// KeyName, uses the named key itself and ignores the CipherValue (issue
// 15). Listing it would only advertise support that is not there.
func DefaultAllowed() []string {
	return []string{
		AlgRSASHA256, AlgRSASHA384, AlgRSASHA512,
		AlgRSAPSSSHA256, AlgRSAPSSSHA384, AlgRSAPSSSHA512,
		AlgECDSASHA256, AlgECDSASHA384, AlgECDSASHA512,
		AlgEd25519,
		AlgHMACSHA256, AlgHMACSHA384, AlgHMACSHA512,
		AlgDigestSHA256, AlgDigestSHA384, AlgDigestSHA512,
		AlgRSAOAEPMGF1P, AlgRSAOAEP,
		AlgAES128GCM, AlgAES256GCM,
	}
}

// AlgorithmLabel returns a short stable label for uri ("rsa-sha256",
// "sha256", "aes256-gcm", ...) or LabelOther. Metric labels must come from
// a closed set: an attacker-chosen URI must never become a label value.
func AlgorithmLabel(uri string) string {
	if a, ok := algs[uri]; ok {
		return a.label
	}
	return LabelOther
}

// AllowList is an immutable set of algorithm URIs, each valid only in its
// own class. The zero value (and a nil *AllowList) allows nothing, so a
// missing policy fails closed. It is safe for concurrent use.
type AllowList struct {
	m map[string]AlgorithmClass
}

// NewAllowList builds an allow-list from uris. An unknown URI, or an MGF
// URI (a parameter, not a method), is a configuration error wrapping
// ErrUnsupportedAlgorithm: a typo must not silently disable an algorithm.
func NewAllowList(uris ...string) (*AllowList, error) {
	m := make(map[string]AlgorithmClass, len(uris))
	for _, u := range uris {
		a, ok := algs[u]
		if !ok || a.class == ClassMGF {
			return nil, fmt.Errorf("crypto: allow-list: %q: %w", clip(u), ErrUnsupportedAlgorithm)
		}
		m[u] = a.class
	}
	return &AllowList{m: m}, nil
}

// Allowed reports whether uri is in the list as an algorithm of class c.
func (l *AllowList) Allowed(c AlgorithmClass, uri string) bool {
	if l == nil {
		return false
	}
	got, ok := l.m[uri]
	return ok && got == c
}

// Check returns nil when uri is allowed as class c. It is meant to run
// before any key is touched (CXF CVE-2012-5575: the algorithm was checked
// only after decrypting). The error wraps ErrUnsupportedAlgorithm for a URI
// unknown to the package and ErrAlgorithmNotAllowed otherwise; the URI is
// quoted (%q) because it is attacker-chosen.
func (l *AllowList) Check(c AlgorithmClass, uri string) error {
	if l.Allowed(c, uri) {
		return nil
	}
	if _, ok := algs[uri]; !ok {
		return fmt.Errorf("crypto: %s algorithm %q: %w", c, clip(uri), ErrUnsupportedAlgorithm)
	}
	return fmt.Errorf("crypto: %s algorithm %q: %w", c, clip(uri), ErrAlgorithmNotAllowed)
}

// URIs returns the allowed URIs, sorted.
func (l *AllowList) URIs() []string {
	if l == nil {
		return nil
	}
	out := make([]string, 0, len(l.m))
	for u := range l.m {
		out = append(out, u)
	}
	slices.Sort(out)
	return out
}

// clip bounds an attacker-chosen URI quoted in an error message.
func clip(uri string) string {
	const limit = 120
	if len(uri) > limit {
		return uri[:limit] + "..."
	}
	return uri
}
