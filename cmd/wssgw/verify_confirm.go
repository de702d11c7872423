package main

import (
	"bytes"
	"fmt"

	"github.com/wssgw/wssgw/internal/wss"
)

// confirmationFacts is one wsse11:SignatureConfirmation of a verified
// response.
type confirmationFacts struct {
	// Value is the confirmed SignatureValue as sent; "" when the response
	// says the request was not signed.
	Value string `json:"value"`
	// Signed: a trusted X.509 signature covers the element.
	Signed bool `json:"signed"`
}

func confirmationReport(r *wss.Result) []confirmationFacts {
	var out []confirmationFacts
	for i, v := range r.Confirmations {
		out = append(out, confirmationFacts{Value: v, Signed: r.SignedByTrusted(r.ConfirmationStarts[i])})
	}
	return out
}

// decodeExpected reads the --expect-confirmation values: base64
// SignatureValues, or "" for "the request was not signed".
func decodeExpected(values []string) ([][]byte, error) {
	out := make([][]byte, len(values))
	for i, v := range values {
		if v == "" {
			continue
		}
		b, err := wss.DecodeBase64(v)
		if err != nil {
			return nil, fmt.Errorf("--expect-confirmation %q: not base64: %w", v, err)
		}
		out[i] = b
	}
	return out, nil
}

// checkConfirmations is the requester's side of WSS 1.1 §8.5: the
// response confirms exactly the SignatureValues of the request (as many
// confirmations as values, or one without Value for an unsigned request),
// and each confirmation is covered by a trusted signature, since an
// unsigned one could have been copied in by anyone on the path. Values
// compare as decoded bytes, so line-wrapped base64 matches.
func checkConfirmations(r *wss.Result, expect [][]byte) *wss.Error {
	if r == nil || len(r.Confirmations) == 0 {
		return wss.Failf(wss.ReasonPolicy, "no SignatureConfirmation in the response")
	}
	left := append([][]byte(nil), expect...)
	for i, v := range r.Confirmations {
		if !r.SignedByTrusted(r.ConfirmationStarts[i]) {
			return wss.Failf(wss.ReasonPolicy, "SignatureConfirmation %d is not covered by a trusted signature", i+1)
		}
		got, err := decodeExpected([]string{v})
		if err != nil {
			return wss.Wrap(wss.ReasonMalformed, err, "SignatureConfirmation")
		}
		k := indexOfValue(left, got[0])
		if k < 0 {
			return wss.Failf(wss.ReasonPolicy, "SignatureConfirmation %d confirms %q, which was not expected", i+1, v)
		}
		left = append(left[:k], left[k+1:]...)
	}
	if len(left) > 0 {
		return wss.Failf(wss.ReasonPolicy, "%d expected SignatureConfirmation(s) missing", len(left))
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
