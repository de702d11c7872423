package template

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/testmime"
	"github.com/wssgw/wssgw/internal/wss"
)

// The gateway hands the request it read to wss.Policy.VerifyOwned, which
// cuts the Security header out of that buffer in place and forwards the
// buffer itself (issue 14). So after verification nothing the gateway keeps
// may still point into the request's bytes (the facts it logs, counts,
// puts in identity headers and confirms in the response; the templates and
// certificates the engine learned from it), and what it forwards may not
// point into memory an engine returns to its pools. These tests poison
// both and look again.

// factsSnapshot is a deep copy of everything the gateway reads from a
// result after verification: the facts the engines agree on (compare.go)
// and the signers' certificates and subjects.
func factsSnapshot(t *testing.T, res *wss.Result) string {
	t.Helper()
	b, err := json.Marshal(facts(res))
	require.NoError(t, err)
	for _, s := range res.Signatures {
		if s.Signer != nil {
			raw := sha256.Sum256(s.Signer.Certificate.Raw)
			b = fmt.Appendf(b, "|%s|%x|%s", s.Signer.Subject, raw, s.Signer.SHA256)
		}
	}
	if u := res.Username; u != nil {
		b = fmt.Appendf(b, "|%s|%x", u.Username, u.Nonce)
	}
	return string(b)
}

// poisonBacking overwrites all of b's backing array.
func poisonBacking(b []byte) {
	b = b[:cap(b)]
	for i := range b {
		b[i] = 'X'
	}
}

// TestOwnedBufferAliasing: on a DOM miss that teaches a template and on
// the template hits after it, for a signed, a signed and encrypted, a
// stripped (unsigned content cut in several places) and a kept-header
// message, VerifyOwned forwards what Verify would forward, and
//   - after other messages went through the engine (its pools reused),
//     the forwarded bytes and the facts are unchanged: neither points into
//     a pooled buffer;
//   - after the request buffer is overwritten, the facts are unchanged
//     (they point nowhere into it) and the next message of the shape still
//     hits and verifies (the template and the cached certificate learned
//     from it are copies).
func TestOwnedBufferAliasing(t *testing.T) {
	for _, c := range []struct {
		name   string
		mutate func(*config.Policy)
		enc    bool
		inject bool
	}{
		{name: "ok/sign"},
		{name: "ok/sign-encrypt", enc: true},
		{name: "ok/strip-unsigned", inject: true, mutate: func(p *config.Policy) { p.UnsignedHeaders = config.UnsignedStrip }},
		{name: "ok/strip-unsigned-encrypted", enc: true, inject: true, mutate: func(p *config.Policy) { p.UnsignedHeaders = config.UnsignedStrip }},
		{name: "ok/keepSecurityHeader", mutate: func(p *config.Policy) { p.KeepSecurityHeader = true }},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, c.mutate, testOptions())
			var enc func(*signer.Options)
			if c.enc {
				enc = f.encrypt(signer.RefIssuerSerial)
			}
			k := 0
			msg := func() []byte {
				k++
				m := f.sign(t, envelope(false, 1+k%3, fmt.Sprintf("msg %d", k)), f.rsa, signer.RefBST, f.now.Add(time.Duration(k)*time.Millisecond), enc)
				if c.inject {
					m = inject(m, injectedAdmin)
				}
				return m
			}
			ctx := context.Background()
			for round, want := range []string{metrics.LookupNoTemplate, metrics.LookupHit, metrics.LookupHit} {
				m := msg()
				// The expectation, from the copying path on the DOM engine.
				dres, dout, err := f.policy.Verify(ctx, f.dom, bytes.Clone(m), f.now)
				require.NoError(t, err)
				wantFacts, wantOut := factsSnapshot(t, dres), bytes.Clone(dout)

				data := make([]byte, len(m), len(m)+64) // as readRequest leaves it: spare capacity
				copy(data, m)
				res, out, err := f.policy.VerifyOwned(ctx, f.engine, data, f.now)
				require.NoError(t, err)
				require.Equal(t, want, res.Lookup, "round %d", round)
				require.Equal(t, string(wantOut), string(out), "round %d: VerifyOwned forwards what Verify does", round)
				require.Equal(t, wantFacts, factsSnapshot(t, res), "round %d", round)

				// Other messages reuse the engines' pooled runs and
				// Documents.
				for range 3 {
					_, _, err := f.policy.VerifyOwned(ctx, f.engine, msg(), f.now)
					require.NoError(t, err)
				}
				assert.Equal(t, string(wantOut), string(out), "round %d: the forwarded bytes changed with later messages", round)
				assert.Equal(t, wantFacts, factsSnapshot(t, res), "round %d: the facts changed with later messages", round)

				poisonBacking(data)
				assert.Equal(t, wantFacts, factsSnapshot(t, res), "round %d: the facts point into the request buffer", round)
			}
			// Every buffer the shape was seen in is poisoned by now: the
			// template and the certificate cache hold their own copies.
			m := msg()
			want, _, err := f.policy.Verify(ctx, f.dom, bytes.Clone(m), f.now)
			require.NoError(t, err)
			res, _, err := f.policy.VerifyOwned(ctx, f.engine, m, f.now)
			require.NoError(t, err)
			require.Equal(t, metrics.LookupHit, res.Lookup)
			assert.Equal(t, factsSnapshot(t, want), factsSnapshot(t, res))
		})
	}
}

// TestPackageBufferAliasing is TestOwnedBufferAliasing for MTOM packages,
// plain and with the Body's ciphertext in a part: the root part's bytes
// and the parts' contents are overwritten after verification (the gateway
// closes the package once it was forwarded), and other packages go
// through the engine in between.
func TestPackageBufferAliasing(t *testing.T) {
	for _, c := range []struct {
		name string
		enc  bool
	}{{name: "ok/mtom"}, {name: "ok/mtom-encrypted", enc: true}} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, nil, testOptions())
			rng := rand.New(rand.NewPCG(21, 22))
			k := 0
			pkg := func() ([]byte, *testmime.Parts) {
				k++
				tag := fmt.Sprintf("p%d", k)
				if c.enc {
					return f.encPackage(t, envelope(false, 1+k%3, tag), tag, f.gw)
				}
				return f.mtomPackage(t, 1+k%3, randomParts(rng, 300, 40), tag, f.now.Add(time.Duration(k)*time.Millisecond), false)
			}
			ctx := context.Background()
			verify := func(root []byte, atts *testmime.Parts) (*wss.Result, []byte) {
				t.Helper()
				res, out, err := f.policy.VerifyAttachments(ctx, f.engine, root, atts, f.now)
				require.NoError(t, err)
				return res, out
			}
			hits := 0
			for round := range 2 + genericShadowHits {
				root, atts := pkg()
				dres, dout, err := f.policy.VerifyAttachments(ctx, f.dom, bytes.Clone(root), atts.Clone(), f.now)
				require.NoError(t, err)
				wantFacts, wantOut := factsSnapshot(t, dres), bytes.Clone(dout)

				res, out := verify(root, atts)
				if res.Lookup == metrics.LookupHit {
					hits++
				}
				require.Equal(t, string(wantOut), string(out), "round %d", round)
				require.Equal(t, wantFacts, factsSnapshot(t, res), "round %d", round)
				for range 2 {
					verify(pkg())
				}
				assert.Equal(t, string(wantOut), string(out), "round %d: the forwarded root changed with later packages", round)
				assert.Equal(t, wantFacts, factsSnapshot(t, res), "round %d: the facts changed with later packages", round)

				poisonBacking(root)
				for _, p := range atts.ByID {
					poisonBacking(p.Data)
				}
				assert.Equal(t, wantFacts, factsSnapshot(t, res), "round %d: the facts point into the package", round)
			}
			assert.Positive(t, hits, "the template path verified packages")
			root, atts := pkg()
			want, _, err := f.policy.VerifyAttachments(ctx, f.dom, bytes.Clone(root), atts.Clone(), f.now)
			require.NoError(t, err)
			res, _ := verify(root, atts)
			require.Equal(t, metrics.LookupHit, res.Lookup)
			assert.Equal(t, factsSnapshot(t, want), factsSnapshot(t, res))
		})
	}
}
