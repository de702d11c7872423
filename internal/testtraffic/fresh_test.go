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
	"github.com/wssgw/wssgw/internal/testpki"
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

// TestNewPartnerWith: a new partner signs with the key it is given, not
// the generator's: its messages verify where its certificate is pinned
// and are refused as untrusted where only the generator's is trusted; and
// NewPartner is NewPartnerWith the generator's own key, byte for byte.
func TestNewPartnerWith(t *testing.T) {
	dir := t.TempDir()
	leaf := testpki.NewCA(t, "new partner CA").IssueRSA(t, dir, "new-partner")
	own := &wcrypto.KeyPair{Signer: leaf.Key, Certificate: leaf.Cert}
	e, demo := verifier(t)
	p := config.DefaultPolicy()
	p.Replay = "off"
	p.Trust.PinnedCertFiles = []string{leaf.CertFile}
	pinned, err := wss.Compile("new-partner", p, nil, reload.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g, now := demoGenerator(t, 31)
	for i := range 8 { // enough partners to draw every key reference form
		msgs, err := g.NewPartnerWith(own, 2)
		if err != nil {
			t.Fatal(err)
		}
		for j, m := range msgs {
			if m.Stack != "new-partner" || m.Op != msgs[0].Op {
				t.Fatalf("partner %d message %d: stack %s op %s, want new-partner %s", i, j, m.Stack, m.Op, msgs[0].Op)
			}
			if _, err := e.Process(m.Signed, pinned, now); err != nil {
				t.Fatalf("partner %d message %d fails where its certificate is pinned: %v\n%s", i, j, err, m.Signed)
			}
			if _, err := e.Process(m.Signed, demo, now); err == nil {
				t.Fatalf("partner %d message %d accepted under the generator's trust only: not signed with its own key", i, j)
			}
		}
	}
	a, _ := demoGenerator(t, 32)
	b, _ := demoGenerator(t, 32)
	got, err := a.NewPartner(3)
	if err != nil {
		t.Fatal(err)
	}
	want, err := b.NewPartnerWith(b.kp, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if !bytes.Equal(got[i].Signed, want[i].Signed) {
			t.Fatalf("NewPartner message %d differs from NewPartnerWith the generator's key", i)
		}
	}
}
