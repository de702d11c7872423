package template

import (
	"bytes"
	"fmt"
	"reflect"

	"github.com/wssgw/wssgw/internal/wss"
)

// Compare returns "" when two engines' outcomes for one message agree: the
// same verdict, the same forwarded bytes and the same verified facts, else
// what differs. Timings and the lookup are not facts.
func Compare(a *wss.Result, aerr error, b *wss.Result, berr error, keep bool) string {
	if (aerr == nil) != (berr == nil) {
		return fmt.Sprintf("verdict: %v vs %v", aerr, berr)
	}
	if aerr != nil {
		return ""
	}
	if !bytes.Equal(a.Forward(keep), b.Forward(keep)) {
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
	Timestamp *wss.Timestamp
	Username  *wss.UsernameToken
	Token     int
	Sigs      []sigFacts
	Decrypted []wss.Decryption
	Algs      []wss.AlgorithmUse
	Confirms  []string
	ConfirmAt []int
}

func facts(r *wss.Result) resultFacts {
	f := resultFacts{Version: int(r.Version), Body: r.Body, Security: r.Security, Headers: r.Headers,
		Timestamp: r.Timestamp, Username: r.Username, Token: r.Token, Decrypted: r.Decrypted, Algs: r.Algorithms,
		Confirms: r.Confirmations, ConfirmAt: r.ConfirmationStarts}
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
