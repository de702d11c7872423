package main

import (
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

// checkConfirmations is the requester's side of WSS 1.1 §8.5
// (wss.CheckConfirmations, shared with egress routes).
func checkConfirmations(r *wss.Result, expect [][]byte) *wss.Error {
	return wss.CheckConfirmations(r, expect)
}
