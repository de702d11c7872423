package egress

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"
)

// FuzzVerify: whatever the partner sends, Verify never panics, every
// refusal is a RejectedError, and nothing but a verified response or an
// unsigned SOAP Fault (unsignedFaults: pass) is ever handed on: a verdict
// without facts is a fault.
func FuzzVerify(f *testing.F) {
	p := newPKI(f)
	c := p.client(f, nil)
	req, err := c.Secure([]byte(request))
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(answer))
	f.Add([]byte(fault))
	f.Add([]byte(fault12))
	f.Add([]byte(`<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Header>` +
		`<wsse:Security xmlns:wsse="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd"/>` +
		`</soap:Header><soap:Body><soap:Fault/></soap:Body></soap:Envelope>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		v, err := c.Verify(context.Background(), req, bytes.Clone(body), time.Now()) // Verify cuts in place
		if err != nil {
			var rej *RejectedError
			if !errors.As(err, &rej) {
				t.Fatalf("not a RejectedError: %v", err)
			}
			return
		}
		if v.Result == nil && !v.Fault {
			t.Fatalf("an unverified non-fault was handed on: %q", body)
		}
		if v.Unsigned && !bytes.Equal(v.Plaintext, body) {
			t.Fatal("an unsigned fault is passed as it came")
		}
	})
}
