package template

import (
	"bytes"
	"fmt"
	"reflect"

	"github.com/wssgw/wssgw/internal/wss"
)

// Compare returns "" when two engines' outcomes for one message agree: the
// same verdict, the same bytes forwarded under policy p and the same
// verified facts, else what differs. Timings, the lookup and what Verify
// stripped (derived from the facts) are not facts.
func Compare(a *wss.Result, aerr error, b *wss.Result, berr error, p *wss.Policy) string {
	if (aerr == nil) != (berr == nil) {
		return fmt.Sprintf("verdict: %v vs %v", aerr, berr)
	}
	if aerr != nil {
		return ""
	}
	fa, _ := a.Forward(p)
	fb, _ := b.Forward(p)
	if !bytes.Equal(fa, fb) {
		return "forwarded bytes"
	}
	x, y := facts(a), facts(b)
	if !reflect.DeepEqual(x, y) {
		return fmt.Sprintf("facts: %+v vs %+v", x, y)
	}
	return ""
}

type sigFacts struct {
	Signer               string
	KeyRef, Method, C14N string
	KeyBits              int
	Covered              []int
	SignedInfoDigest     [32]byte
	SignatureValue       []byte
}

type resultFacts struct {
	Version   int
	Body      int
	Security  [2]int
	Headers   []wss.Part
	Attrs     []wss.Attribute
	Comments  [][2]int
	Timestamp *wss.Timestamp
	Username  *wss.UsernameToken
	Token     int
	Sigs      []sigFacts
	Decrypted []wss.Decryption
	Algs      []wss.AlgorithmUse
	Confirms  []string
	ConfirmAt []int
	Atts      []wss.AttachmentFact
	Consumed  []string
}

func facts(r *wss.Result) resultFacts {
	f := resultFacts{Version: int(r.Version), Body: r.Body, Security: r.Security, Headers: r.Headers,
		Attrs: r.Attributes, Comments: r.Comments,
		Timestamp: r.Timestamp, Username: r.Username, Token: r.Token, Decrypted: r.Decrypted, Algs: r.Algorithms,
		Confirms: r.Confirmations, ConfirmAt: r.ConfirmationStarts, Consumed: r.Consumed}
	for _, a := range r.Attachments {
		a.Signatures = emptyNil(a.Signatures)
		f.Atts = append(f.Atts, a)
	}
	// An engine may hand over an empty list where the other has none (the
	// DOM engine sizes its algorithm uses up front): the same fact.
	f.Headers, f.Attrs, f.Comments = emptyNil(f.Headers), emptyNil(f.Attrs), emptyNil(f.Comments)
	f.Decrypted, f.Algs, f.Consumed = emptyNil(f.Decrypted), emptyNil(f.Algs), emptyNil(f.Consumed)
	f.Confirms, f.ConfirmAt = emptyNil(f.Confirms), emptyNil(f.ConfirmAt)
	for _, s := range r.Signatures {
		sf := sigFacts{KeyRef: s.KeyReference, Method: s.Method, C14N: s.C14N, KeyBits: s.KeyBits, Covered: s.Covered, SignedInfoDigest: s.SignedInfoDigest,
			SignatureValue: s.SignatureValue}
		if s.Signer != nil {
			sf.Signer = s.Signer.SHA256
		}
		f.Sigs = append(f.Sigs, sf)
	}
	return f
}

// emptyNil is s, or nil when s is empty: reflect.DeepEqual tells an empty
// slice from a nil one, a verdict must not.
func emptyNil[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}
