package crypto

import "errors"

// Sentinel errors. Every error returned by this package wraps exactly one of
// them or of the algorithm sentinels in algorithms.go (with %w and a
// "crypto: ..." message), so callers can test with errors.Is and map the
// failure to a metric label with Reason. Every exported Err* has a label
// (TestReasonCoversEveryError).
var (
	ErrUntrusted      = errors.New("certificate not trusted")
	ErrExpired        = errors.New("certificate expired")
	ErrNotYetValid    = errors.New("certificate not yet valid")
	ErrRevoked        = errors.New("certificate revoked")
	ErrKeyUsage       = errors.New("certificate key usage not allowed")
	ErrSubject        = errors.New("certificate subject not allowed")
	ErrKeyTooWeak     = errors.New("key too weak")
	ErrUnsupportedKey = errors.New("unsupported key type")
	ErrKeyMismatch    = errors.New("private key does not match certificate")
	ErrEncryptedKey   = errors.New("encrypted PEM private key not supported")
	ErrBadPassword    = errors.New("wrong PKCS#12 password")
	ErrCRL            = errors.New("invalid CRL")
	ErrOCSP           = errors.New("OCSP status not established")
	ErrNotFound       = errors.New("certificate not found")
	ErrBadDN          = errors.New("malformed distinguished name")
	ErrLoad           = errors.New("cannot load key material")
)

// Reason labels, a closed set (stable: they are metric label values).
const (
	ReasonNone         = "none"
	ReasonUntrusted    = "untrusted"
	ReasonExpired      = "expired"
	ReasonNotYetValid  = "not_yet_valid"
	ReasonRevoked      = "revoked"
	ReasonKeyUsage     = "key_usage"
	ReasonSubject      = "subject"
	ReasonKeyTooWeak   = "key_too_weak"
	ReasonUnsupported  = "unsupported_key"
	ReasonKeyMismatch  = "key_mismatch"
	ReasonEncryptedKey = "encrypted_key"
	ReasonBadPassword  = "bad_password"
	ReasonCRL          = "crl"
	ReasonOCSP         = "ocsp"
	ReasonNotFound     = "not_found"
	ReasonBadDN        = "bad_dn"
	ReasonLoad         = "load"
	// Labels of the algorithm primitives' errors. ReasonDecrypt is one
	// label for every decryption or key unwrap failure, as ErrDecrypt is
	// one error: no oracle in the labels either.
	ReasonUnsupportedAlgorithm = "unsupported_algorithm"
	ReasonAlgorithmNotAllowed  = "algorithm_not_allowed"
	ReasonAlgorithmKey         = "algorithm_key"
	ReasonSignature            = "signature"
	ReasonDecrypt              = "decrypt"
	ReasonEncrypt              = "encrypt"
	ReasonOther                = "other"
)

var reasons = []struct {
	err   error
	label string
}{
	{ErrUntrusted, ReasonUntrusted},
	{ErrExpired, ReasonExpired},
	{ErrNotYetValid, ReasonNotYetValid},
	{ErrRevoked, ReasonRevoked},
	{ErrKeyUsage, ReasonKeyUsage},
	{ErrSubject, ReasonSubject},
	{ErrKeyTooWeak, ReasonKeyTooWeak},
	{ErrUnsupportedKey, ReasonUnsupported},
	{ErrKeyMismatch, ReasonKeyMismatch},
	{ErrEncryptedKey, ReasonEncryptedKey},
	{ErrBadPassword, ReasonBadPassword},
	{ErrCRL, ReasonCRL},
	{ErrOCSP, ReasonOCSP},
	{ErrNotFound, ReasonNotFound},
	{ErrBadDN, ReasonBadDN},
	{ErrLoad, ReasonLoad},
	{ErrUnsupportedAlgorithm, ReasonUnsupportedAlgorithm},
	{ErrAlgorithmNotAllowed, ReasonAlgorithmNotAllowed},
	{ErrAlgorithmKey, ReasonAlgorithmKey},
	{ErrSignature, ReasonSignature},
	{ErrDecrypt, ReasonDecrypt},
	{ErrEncrypt, ReasonEncrypt},
}

// Reason returns the stable metric label for err: ReasonNone for nil, one of
// the Reason* constants for errors of this package, ReasonOther otherwise.
func Reason(err error) string {
	if err == nil {
		return ReasonNone
	}
	for _, r := range reasons {
		if errors.Is(err, r.err) {
			return r.label
		}
	}
	return ReasonOther
}
