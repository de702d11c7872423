package template

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/wssgw/wssgw/internal/signer"
)

// FuzzEngines compares the template path with the DOM engine on mutated
// messages, a template learned for the seed's shape: the same verdict, and
// for accepted messages the same facts and forwarded bytes.
func FuzzEngines(f *testing.F) {
	fx := newFixture(f, nil, testOptions())
	for _, c := range []struct {
		ref string
		enc func(*signer.Options)
	}{{signer.RefBST, nil}, {signer.RefSKI, nil}, {signer.RefBST, fx.encrypt(signer.RefSKI)}} {
		learnMsg := fx.sign(f, envelope(false, 2, "learn"), fx.rsa, c.ref, fx.now, c.enc)
		if _, err := fx.engine.Process(learnMsg, fx.policy, fx.now); err != nil {
			f.Fatal(err)
		}
		f.Add(fx.sign(f, envelope(false, 2, "seed &amp; more"), fx.rsa, c.ref, fx.now, c.enc))
		// Unsigned content injected after signing (issue 13 item 8), its
		// shape learned: the engines must report the same spans to strip.
		if _, err := fx.engine.Process(inject(learnMsg, injectedAdmin), fx.policy, fx.now); err != nil {
			f.Fatal(err)
		}
		f.Add(inject(fx.sign(f, envelope(false, 2, "seed"), fx.rsa, c.ref, fx.now, c.enc), injectedAdmin))
		// The layers around the engines (issue 13): envelope text, CDATA
		// and comments, a version-mixed Header, a non-UTF-8 declaration,
		// and a SOAP 1.2 message, so the fuzzer mutates from each class.
		signed := string(fx.sign(f, envelope(false, 2, "seed"), fx.rsa, c.ref, fx.now, c.enc))
		for _, edit := range [][2]string{
			{`</soap:Header>`, `</soap:Header>text`},
			{`</soap:Header>`, `</soap:Header><![CDATA[<soap:Body>fake</soap:Body>]]>`},
			{`<soap:Header>`, `<soap:Header><!--c-->`},
			{`<soap:Header>`, `<soap:Header xmlns:soap="http://www.w3.org/2003/05/soap-envelope">`},
			{`<soap:Envelope`, `<?xml version="1.0" encoding="ISO-8859-1"?><soap:Envelope`},
		} {
			f.Add([]byte(strings.Replace(signed, edit[0], edit[1], 1)))
		}
		f.Add(fx.sign(f, envelope(true, 2, "seed"), fx.rsa, c.ref, fx.now, c.enc))
	}
	// WSS4J's X509v3 KeyIdentifier (issue 15): the certificate in the STR,
	// learned as a constant of the template.
	kiLearn := toX509KI(f, fx.sign(f, envelope(false, 2, "learn"), fx.rsa, signer.RefBST, fx.now, nil))
	if _, err := fx.engine.Process(kiLearn, fx.policy, fx.now); err != nil {
		f.Fatal(err)
	}
	f.Add(toX509KI(f, fx.sign(f, envelope(false, 2, "seed ki"), fx.rsa, signer.RefBST, fx.now, nil)))
	f.Add(toX509KI(f, fx.sign(f, envelope(true, 2, "seed ki"), fx.rsa, signer.RefBST, fx.now, nil)))
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, msg []byte) {
		got, gout, gerr := fx.policy.Verify(ctx, fx.engine, msg, fx.now)
		want, wout, werr := fx.policy.Verify(ctx, fx.dom, msg, fx.now)
		if d := Compare(got, gerr, want, werr, fx.policy); d != "" {
			t.Fatalf("engines disagree: %s", d)
		}
		if string(gout) != string(wout) {
			t.Fatalf("engines forward different bytes")
		}
	})
}

// TestRandomMutationsAgree is FuzzEngines's check on 3,000 seeded random
// byte mutations of a signed and of a signed-then-encrypted message, so
// every test run compares the engines beyond the attack suite.
func TestRandomMutationsAgree(t *testing.T) {
	fx := newFixture(t, nil, testOptions())
	for _, enc := range []func(*signer.Options){nil, fx.encrypt(signer.RefIssuerSerial)} {
		learnMsg := fx.sign(t, envelope(false, 2, "learn"), fx.rsa, signer.RefBST, fx.now, enc)
		if _, err := fx.engine.Process(learnMsg, fx.policy, fx.now); err != nil {
			t.Fatal(err)
		}
		seed := fx.sign(t, envelope(false, 2, "seed"), fx.rsa, signer.RefBST, fx.now, enc)
		mutateAndCompare(t, fx, seed, 1500)
	}
	// An unsigned header block and Envelope/Header attributes injected
	// after signing, the shape learned: mutations move, break and rename
	// the content the policy strips.
	learnMsg := inject(fx.sign(t, envelope(false, 2, "learn"), fx.rsa, signer.RefBST, fx.now, nil), injectedAdmin)
	if _, err := fx.engine.Process(learnMsg, fx.policy, fx.now); err != nil {
		t.Fatal(err)
	}
	mutateAndCompare(t, fx, inject(fx.sign(t, envelope(false, 2, "seed"), fx.rsa, signer.RefBST, fx.now, nil), injectedAdmin), 1000)
}

func mutateAndCompare(t *testing.T, fx *fixture, seed []byte, n int) {
	rng := rand.New(rand.NewPCG(1, 2))
	ctx := context.Background()
	for i := range n {
		m := append([]byte(nil), seed...)
		for range 1 + i%4 {
			m[rng.IntN(len(m))] = byte(rng.IntN(256))
		}
		got, gout, gerr := fx.policy.Verify(ctx, fx.engine, m, fx.now)
		want, wout, werr := fx.policy.Verify(ctx, fx.dom, m, fx.now)
		if d := Compare(got, gerr, want, werr, fx.policy); d != "" {
			t.Fatalf("mutation %d: engines disagree: %s", i, d)
		}
		if string(gout) != string(wout) {
			t.Fatalf("mutation %d: engines forward different bytes", i)
		}
	}
}
