package traffic

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

var keys = filepath.Join("..", "..", "..", "examples", "keys")

func testGenerator(t *testing.T, seed uint64) (*Generator, time.Time) {
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

// TestListLen checks the long tail issue 14 asks for: lengths within
// 0–100, most lists short, some long.
func TestListLen(t *testing.T) {
	g, _ := testGenerator(t, 1)
	const n = 20000
	var short, long, zero, max int
	for range n {
		l := listLen(g.r)
		if l < 0 || l > maxItems {
			t.Fatalf("length %d outside 0–%d", l, maxItems)
		}
		switch {
		case l == 0:
			zero++
		case l >= 50:
			long++
		}
		if l <= 10 {
			short++
		}
		if l == maxItems {
			max++
		}
	}
	if short < n*6/10 {
		t.Errorf("%d of %d lists have ≤ 10 items, want most", short, n)
	}
	if long < n/20 || long > n/5 {
		t.Errorf("%d of %d lists have ≥ 50 items, want 5–20 %%", long, n)
	}
	if zero == 0 || max == 0 {
		t.Errorf("empty lists %d, full lists %d: both ends must occur", zero, max)
	}
}

// TestDeterministic: the same seed and clock make the same signed bytes,
// another seed different ones.
func TestDeterministic(t *testing.T) {
	a, now := testGenerator(t, 7)
	b, _ := testGenerator(t, 7)
	b.now = func() time.Time { return now }
	c, _ := testGenerator(t, 8)
	c.now = func() time.Time { return now }
	differ := false
	for i := range 20 {
		ma, err := a.Next()
		if err != nil {
			t.Fatal(err)
		}
		mb, _ := b.Next()
		mc, _ := c.Next()
		if !bytes.Equal(ma.Signed, mb.Signed) {
			t.Fatalf("message %d differs between two runs of seed 7", i)
		}
		differ = differ || !bytes.Equal(ma.Signed, mc.Signed)
	}
	if !differ {
		t.Error("seeds 7 and 8 made the same messages")
	}
}

// TestFresh: fresh-shape messages verify on the DOM engine (an attacker
// with a key sends valid messages), each carries its own extra header
// block (a shape no store has seen), and their garbage twins are refused
// with a signature failure after the digests, not earlier.
func TestFresh(t *testing.T) {
	g, now := testGenerator(t, 9)
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
