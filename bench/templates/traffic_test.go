package main

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/wssgw/wssgw/bench/internal/traffic"
	wcrypto "github.com/wssgw/wssgw/internal/crypto"
)

func testGenerator(t *testing.T, seed uint64) (*traffic.Generator, *engines, time.Time) {
	t.Helper()
	e, err := newEngines(keys, 0)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	return traffic.New(seed, partnerKey(t), func() time.Time { return now }), e, now
}

var keys = filepath.Join("..", "..", "examples", "keys")

func partnerKey(t *testing.T) *wcrypto.KeyPair {
	t.Helper()
	kp, err := wcrypto.LoadKeyPair(wcrypto.KeyFileOptions{
		CertFile: filepath.Join(keys, "partner.crt"), KeyFile: filepath.Join(keys, "partner.key")})
	if err != nil {
		t.Fatal(err)
	}
	return kp
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
		m, err := g.Next()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.dom.Process(m.Signed, e.policy, now); err != nil {
			t.Fatalf("message %d (%s %s) fails the DOM engine: %v", i, m.Stack, m.Op, err)
		}
		stackSeen[m.Stack], opSeen[m.Op] = true, true
		if bytes.Contains(m.Plain, []byte("Comment>")) {
			withComment++
		} else {
			withoutComment++
		}
		if bytes.Contains(m.Plain, []byte("&amp;")) || bytes.Contains(m.Plain, []byte("&lt;")) {
			escaped++
		}
		if bytes.ContainsFunc(m.Plain, func(r rune) bool { return r > 127 }) {
			nonASCII++
		}
	}
	if len(stackSeen) != traffic.Stacks() {
		t.Errorf("stacks seen %v, want all %d", stackSeen, traffic.Stacks())
	}
	if n >= 400 && len(opSeen) != traffic.Operations() {
		t.Errorf("operations seen %d, want all %d", len(opSeen), traffic.Operations())
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
		m, err := g.Next()
		if err != nil {
			t.Fatal(err)
		}
		f, err := floorOf(e.gate, m.Signed, partnerKey(t).Certificate.PublicKey)
		if err != nil {
			t.Fatalf("%s %s: %v", m.Stack, m.Op, err)
		}
		// Timestamp, Body and the stack's addressing headers.
		if want := 2 + traffic.SignedHeaders(m.Stack); len(f.parts) != want {
			t.Errorf("%s: %d signed parts, want %d", m.Stack, len(f.parts), want)
		}
		f.signedInfo = bytes.Replace(f.signedInfo, []byte("Reference"), []byte("Referencf"), 1)
		if f.run() == nil {
			t.Errorf("%s: floor verified a changed SignedInfo", m.Stack)
		}
	}
}
