package testtraffic

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/wssgw/wssgw/internal/config"
	wcrypto "github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/dom"
	"github.com/wssgw/wssgw/internal/reload"
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

var keys = filepath.Join("..", "..", "examples", "keys")

// demoGenerator signs with the demo partner key at a fixed time.
func demoGenerator(t *testing.T, seed uint64) (*Generator, time.Time) {
	t.Helper()
	kp, err := wcrypto.LoadKeyPair(wcrypto.KeyFileOptions{
		CertFile: filepath.Join(keys, "partner.crt"), KeyFile: filepath.Join(keys, "partner.key")})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	return New(seed, kp, func() time.Time { return now }), now
}

// verifier is the DOM engine over the policy the benchmarks use: the demo
// CA, the partner certificate known (for the thumbprint, SKI and
// IssuerSerial references), replay off.
func verifier(t *testing.T) (*dom.Engine, *wss.Policy) {
	t.Helper()
	p := config.DefaultPolicy()
	p.Replay = "off"
	p.Trust.CAFiles = []string{filepath.Join(keys, "ca.crt")}
	p.Trust.KnownCertFiles = []string{filepath.Join(keys, "partner.crt")}
	pol, err := wss.Compile("partner", p, nil, reload.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := dom.New(xmlscan.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return e, pol
}

// TestFresh: fresh-shape messages verify on the DOM engine (an attacker
// with a key sends valid messages), each carries its own extra header
// block (a shape no store has seen), and their garbage twins are refused
// with a signature failure after the digests, not earlier.
func TestFresh(t *testing.T) {
	g, now := demoGenerator(t, 9)
	e, pol := verifier(t)
	seen := map[string]bool{}
	for i := range 40 {
		m, err := g.Fresh()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Process(m.Signed, pol, now); err != nil {
			t.Fatalf("fresh message %d fails the DOM engine: %v\n%s", i, err, m.Signed)
		}
		at := bytes.Index(m.Plain, []byte(":Trace"))
		if at < 0 {
			t.Fatalf("fresh message %d has no extra header block", i)
		}
		name := string(m.Plain[at : at+22])
		if seen[name] {
			t.Fatalf("extra header %s drawn twice", name)
		}
		seen[name] = true
		bad, err := g.FreshGarbage()
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.Process(bad.Signed, pol, now)
		if err == nil {
			t.Fatalf("garbage message %d accepted", i)
		}
		if f, ok := errors.AsType[*wss.Error](err); !ok || f.Reason != wss.ReasonSignature {
			t.Errorf("garbage message %d refused with %v, want an invalid signature", i, err)
		}
	}
}

// TestVarietyVerifies: every message of the variety mix verifies on the
// DOM engine (the signer and the verifier agree on every form the variety
// writes; internal/template's TestTrafficAgrees runs it encrypted too).
func TestVarietyVerifies(t *testing.T) {
	g, now := demoGenerator(t, 12)
	g.Variety = true
	e, pol := verifier(t)
	n := 200
	if testing.Short() {
		n = 50
	}
	for i := range n {
		m, err := g.Next()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Process(m.Signed, pol, now); err != nil {
			t.Fatalf("variety message %d (%s %s) fails the DOM engine: %v\n%s", i, m.Stack, m.Op, err, m.Plain)
		}
	}
}
