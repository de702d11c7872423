package wss

import "bytes"

// CheckConfirmations is the requester's side of WSS 1.1 §8.5, for
// `wssgw verify --expect-confirmation` and egress routes: the response
// confirms exactly the SignatureValues of the request (as many
// confirmations as values, or one without Value for an unsigned request,
// expect holding nil), and each confirmation is covered by a trusted
// signature, since an unsigned one could have been copied in by anyone on
// the path. Values compare as decoded bytes, so line-wrapped base64
// matches.
func CheckConfirmations(r *Result, expect [][]byte) *Error {
	if r == nil || len(r.Confirmations) == 0 {
		return Failf(ReasonPolicy, "no SignatureConfirmation in the response")
	}
	left := append([][]byte(nil), expect...)
	for i, v := range r.Confirmations {
		if !r.SignedByTrusted(r.ConfirmationStarts[i]) {
			return Failf(ReasonPolicy, "SignatureConfirmation %d is not covered by a trusted signature", i+1)
		}
		var got []byte
		if v != "" {
			b, err := DecodeBase64(v)
			if err != nil {
				return Wrap(ReasonMalformed, err, "SignatureConfirmation")
			}
			got = b
		}
		k := indexOfValue(left, got)
		if k < 0 {
			return Failf(ReasonPolicy, "SignatureConfirmation %d confirms %q, which was not expected", i+1, v)
		}
		left = append(left[:k], left[k+1:]...)
	}
	if len(left) > 0 {
		return Failf(ReasonPolicy, "%d expected SignatureConfirmation(s) missing", len(left))
	}
	return nil
}

// indexOfValue finds v in list; nil (no signature) matches only nil.
func indexOfValue(list [][]byte, v []byte) int {
	for i, w := range list {
		if (w == nil) == (v == nil) && bytes.Equal(w, v) {
			return i
		}
	}
	return -1
}
