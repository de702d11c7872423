package crypto

import "errors"

// Sentinel errors. Every error returned by this package wraps exactly one of
// them or of the algorithm sentinels in algorithms.go (with %w and a
// "crypto: ..." message), so callers can test with errors.Is and map the
// failure to a metric label with Reason. Every exported Err* has a label
// (TestReasonCoversEveryError). The trust decisions' errors are
// internal/trust's; trust.Reason labels both sets.
var (
	ErrKeyTooWeak     = errors.New("key too weak")
	ErrUnsupportedKey = errors.New("unsupported key type")
	ErrKeyMismatch    = errors.New("private key does not match certificate")
	ErrEncryptedKey   = errors.New("encrypted PEM private key not supported")
	ErrBadPassword    = errors.New("wrong PKCS#12 password")
	ErrLoad           = errors.New("cannot load key material")
)

// Reason labels, a closed set (stable: they are metric label values).
// internal/trust adds the labels of its own errors; the two sets are
// disjoint.
const (
	ReasonNone         = "none"
	ReasonKeyTooWeak   = "key_too_weak"
	ReasonUnsupported  = "unsupported_key"
	ReasonKeyMismatch  = "key_mismatch"
	ReasonEncryptedKey = "encrypted_key"
	ReasonBadPassword  = "bad_password"
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
	{ErrKeyTooWeak, ReasonKeyTooWeak},
	{ErrUnsupportedKey, ReasonUnsupported},
	{ErrKeyMismatch, ReasonKeyMismatch},
	{ErrEncryptedKey, ReasonEncryptedKey},
	{ErrBadPassword, ReasonBadPassword},
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
// For an error that may come from a trust store, use trust.Reason.
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
