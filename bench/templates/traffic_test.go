package main

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	wcrypto "github.com/wssgw/wssgw/internal/crypto"
)

func testGenerator(t *testing.T, seed uint64) (*generator, *engines, time.Time) {
	t.Helper()
	keys := filepath.Join("..", "..", "examples", "keys")
	kp, err := wcrypto.LoadKeyPair(wcrypto.KeyFileOptions{
		CertFile: filepath.Join(keys, "partner.crt"), KeyFile: filepath.Join(keys, "partner.key")})
	if err != nil {
		t.Fatal(err)
	}
	e, err := newEngines(keys, 0)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	return newGenerator(seed, kp, now), e, now
}

// TestListLen checks the long tail issue 14 asks for: lengths within
// 0–100, most lists short, some long.
func TestListLen(t *testing.T) {
	g, _, _ := testGenerator(t, 1)
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

// TestDeterministic: the same seed makes the same signed bytes, another
// seed different ones.
func TestDeterministic(t *testing.T) {
	a, _, now := testGenerator(t, 7)
	b, _, _ := testGenerator(t, 7)
	b.now = now
	c, _, _ := testGenerator(t, 8)
	c.now = now
	differ := false
	for i := range 20 {
		ma, err := a.next()
		if err != nil {
			t.Fatal(err)
		}
		mb, _ := b.next()
		mc, _ := c.next()
		if !bytes.Equal(ma.signed, mb.signed) {
			t.Fatalf("message %d differs between two runs of seed 7", i)
		}
		differ = differ || !bytes.Equal(ma.signed, mc.signed)
	}
	if !differ {
		t.Error("seeds 7 and 8 made the same messages")
	}
}

// TestMixVerifies: every generated message verifies on the DOM engine, and
// the mix covers both stacks, every operation, optional elements both
// present and absent, escaped and non-ASCII text.
func TestMixVerifies(t *testing.T) {
	g, e, now := testGenerator(t, 3)
	stackSeen, opSeen := map[string]bool{}, map[string]bool{}
	var withComment, withoutComment, escaped, nonASCII int
	n := 400
	if testing.Short() {
		n = 100
	}
	for i := range n {
		m, err := g.next()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.dom.Process(m.signed, e.policy, now); err != nil {
			t.Fatalf("message %d (%s %s) fails the DOM engine: %v", i, m.stack, m.op, err)
		}
		stackSeen[m.stack], opSeen[m.op] = true, true
		if bytes.Contains(m.plain, []byte("Comment>")) {
			withComment++
		} else {
			withoutComment++
		}
		if bytes.Contains(m.plain, []byte("&amp;")) || bytes.Contains(m.plain, []byte("&lt;")) {
			escaped++
		}
		if bytes.ContainsFunc(m.plain, func(r rune) bool { return r > 127 }) {
			nonASCII++
		}
	}
	if len(stackSeen) != len(stacks) {
		t.Errorf("stacks seen %v, want all %d", stackSeen, len(stacks))
	}
	if n >= 400 && len(opSeen) != len(operations) {
		t.Errorf("operations seen %d, want all %d", len(opSeen), len(operations))
	}
	if withComment == 0 || withoutComment == 0 || escaped == 0 || nonASCII == 0 {
		t.Errorf("optional present %d / absent %d, escaped %d, non-ASCII %d: each must occur", withComment, withoutComment, escaped, nonASCII)
	}
}

// TestFloor: the floor finds every signed part of both stacks' messages
// and its signature check fails on a changed SignedInfo, so it does the
// real verification work.
func TestFloor(t *testing.T) {
	g, e, _ := testGenerator(t, 5)
	for range 10 {
		m, err := g.next()
		if err != nil {
			t.Fatal(err)
		}
		f, err := floorOf(e.gate, m.signed, g.kp.Certificate.PublicKey)
		if err != nil {
			t.Fatalf("%s %s: %v", m.stack, m.op, err)
		}
		// Timestamp, Body and the stack's addressing headers.
		if want := 2 + len(stackNamed(t, m.stack).headers); len(f.parts) != want {
			t.Errorf("%s: %d signed parts, want %d", m.stack, len(f.parts), want)
		}
		f.signedInfo = bytes.Replace(f.signedInfo, []byte("Reference"), []byte("Referencf"), 1)
		if f.run() == nil {
			t.Errorf("%s: floor verified a changed SignedInfo", m.stack)
		}
	}
}

func stackNamed(t *testing.T, name string) *stack {
	for i := range stacks {
		if stacks[i].name == name {
			return &stacks[i]
		}
	}
	t.Fatalf("no stack %q", name)
	return nil
}
