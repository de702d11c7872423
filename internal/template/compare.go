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
		if len(a.Signatures) == 0 {
			a.Signatures = nil // as nil as the other engine's
		}
		f.Atts = append(f.Atts, a)
	}
	if len(f.Consumed) == 0 {
		f.Consumed = nil
	}
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
