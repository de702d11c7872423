package wss

import "fmt"

// Reason is why a message was rejected: a closed set, used as a metric label
// and logged; partners only ever see the uniform fault (DESIGN.md §5.6)
// unless a policy enables detailed faults.
type Reason uint8

// Reasons. Their numeric values are not stable; use String.
const (
	ReasonMalformed      Reason = iota + 1 // not a well-formed SOAP envelope for the gate or the engine
	ReasonStructure                        // SOAP or Security header layout not allowed
	ReasonMissing                          // a required Security element is absent
	ReasonAlgorithm                        // an algorithm outside the policy's allow-list
	ReasonToken                            // a security token or reference that cannot be used
	ReasonUntrusted                        // the signing certificate is not trusted
	ReasonSignature                        // SignatureValue does not verify
	ReasonDigest                           // a Reference's digest does not match
	ReasonReference                        // a Reference that does not resolve to one element
	ReasonDecrypt                          // decryption failed (uniform: no oracle)
	ReasonTimestamp                        // Timestamp malformed, expired or in the future
	ReasonAuthentication                   // UsernameToken credentials wrong
	ReasonPolicy                           // verified facts do not meet the policy
	ReasonReplay                           // a message or nonce seen before
	ReasonReplayStore                      // the replay store is unavailable (fail closed)
	ReasonShadow                           // the template path and the DOM engine disagreed (shadow check)
	ReasonUnsigned                         // a header block or Envelope/Header attribute no trusted signature covers (unsignedHeaders: reject)
	ReasonStoreReset                       // created before the replay store lost its keys, within the window after (issue 16)
	numReasons
)

var reasonNames = [numReasons]string{
	ReasonMalformed:      "malformed",
	ReasonStructure:      "structure",
	ReasonMissing:        "missing",
	ReasonAlgorithm:      "algorithm",
	ReasonToken:          "token",
	ReasonUntrusted:      "untrusted",
	ReasonSignature:      "signature",
	ReasonDigest:         "digest",
	ReasonReference:      "reference",
	ReasonDecrypt:        "decrypt",
	ReasonTimestamp:      "timestamp",
	ReasonAuthentication: "authentication",
	ReasonPolicy:         "policy",
	ReasonReplay:         "replay",
	ReasonReplayStore:    "replay_store",
	ReasonShadow:         "shadow",
	ReasonUnsigned:       "unsigned",
	ReasonStoreReset:     "replay_store_reset",
}

// String is the metric label of r.
func (r Reason) String() string {
	if r == 0 || r >= numReasons {
		return "unknown"
	}
	return reasonNames[r]
}

// Reasons lists every reason, for pre-registered metric series.
func Reasons() []Reason {
	out := make([]Reason, 0, numReasons-1)
	for r := Reason(1); r < numReasons; r++ {
		out = append(out, r)
	}
	return out
}

// FaultCode is the WSS 1.1 §12 fault code for r, sent only when a policy
// enables detailed faults; the uniform answer is InvalidSecurity.
func (r Reason) FaultCode() string {
	switch r {
	case ReasonAlgorithm:
		return "UnsupportedAlgorithm"
	case ReasonToken:
		return "InvalidSecurityToken"
	case ReasonUntrusted, ReasonAuthentication:
		return "FailedAuthentication"
	case ReasonSignature, ReasonDigest, ReasonDecrypt, ReasonReference:
		return "FailedCheck"
	case ReasonTimestamp, ReasonReplay, ReasonStoreReset:
		return "MessageExpired"
	}
	return "InvalidSecurity"
}

// Error is a security failure. Detail is for the log only: it may name
// elements and algorithms but never carries key material or plaintext.
type Error struct {
	Reason Reason
	Detail string
	Err    error
}

func (e *Error) Error() string {
	s := "wss: " + e.Reason.String() + ": " + e.Detail
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// Failf returns an Error with a formatted detail.
func Failf(r Reason, format string, args ...any) *Error {
	return &Error{Reason: r, Detail: fmt.Sprintf(format, args...)}
}

// Wrap returns an Error for r carrying err as its cause.
func Wrap(r Reason, err error, format string, args ...any) *Error {
	return &Error{Reason: r, Detail: fmt.Sprintf(format, args...), Err: err}
}
