package trust

import (
	"errors"

	"github.com/wssgw/wssgw/internal/crypto"
)

// Sentinel errors of the trust decisions. Every error returned by this
// package wraps exactly one of them, or one of internal/crypto's when the
// cause is the key material itself (crypto.ErrLoad for an unreadable file,
// crypto.ErrKeyTooWeak, crypto.ErrUnsupportedKey), so callers can test
// with errors.Is and label the failure with Reason. Every exported Err*
// has a label (TestReasonCoversEveryError).
var (
	ErrUntrusted   = errors.New("certificate not trusted")
	ErrExpired     = errors.New("certificate expired")
	ErrNotYetValid = errors.New("certificate not yet valid")
	ErrRevoked     = errors.New("certificate revoked")
	ErrKeyUsage    = errors.New("certificate key usage not allowed")
	ErrSubject     = errors.New("certificate subject not allowed")
	ErrCRL         = errors.New("invalid CRL")
	ErrOCSP        = errors.New("OCSP status not established")
	ErrNotFound    = errors.New("certificate not found")
	ErrBadDN       = errors.New("malformed distinguished name")
)

// Reason labels of this package's errors, a closed set beside
// internal/crypto's (stable: they are metric label values).
const (
	ReasonUntrusted   = "untrusted"
	ReasonExpired     = "expired"
	ReasonNotYetValid = "not_yet_valid"
	ReasonRevoked     = "revoked"
	ReasonKeyUsage    = "key_usage"
	ReasonSubject     = "subject"
	ReasonCRL         = "crl"
	ReasonOCSP        = "ocsp"
	ReasonNotFound    = "not_found"
	ReasonBadDN       = "bad_dn"
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
	{ErrCRL, ReasonCRL},
	{ErrOCSP, ReasonOCSP},
	{ErrNotFound, ReasonNotFound},
	{ErrBadDN, ReasonBadDN},
}

// Reason returns the stable metric label for err: one of this package's
// Reason* constants for its errors, else crypto.Reason(err) (so
// crypto.ReasonNone for nil and crypto.ReasonOther for a foreign error).
// It labels any error of a trust store or of key material.
func Reason(err error) string {
	if err == nil {
		return crypto.ReasonNone
	}
	for _, r := range reasons {
		if errors.Is(err, r.err) {
			return r.label
		}
	}
	return crypto.Reason(err)
}
