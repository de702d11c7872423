package dom

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/wssgw/wssgw/internal/config"
	wcrypto "github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/reload"
	"github.com/wssgw/wssgw/internal/testtraffic"
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// BenchmarkFresh is the DOM engine's cost per message of the traffic an
// attacker forces onto it (issue 14): testtraffic's mix (what a
// legitimate miss costs), Fresh (validly signed one-off shapes: random
// prefixes, header blocks, key reference forms, SHA-2 digests and
// signatures) and FreshGarbage (Fresh with a wrong SignatureValue: what a
// sender without a key can force). Each sub-benchmark reports the thread
// CPU time per message, its ratio to one RSA-2048 PKCS#1 v1.5 verification
// measured in the same loop as the engines make it (x-rsa: the crypto a
// garbage message cannot avoid), and allocations. Run:
//
//	go test -run '^$' -bench Fresh -benchtime 2000x ./internal/dom/
func BenchmarkFresh(b *testing.B) {
	r := newFreshRig(b)
	kp, pol, e, g, now := r.kp, r.pol, r.e, r.g, r.now
	// The unit: one RSA-SHA256 verification as the engines make it
	// (internal/crypto keeps the key's modulus once it verified with it).
	pub := kp.Certificate.PublicKey
	signed := []byte("floor")
	sum := sha256.Sum256(signed)
	sig, err := kp.Signer.Sign(rand.Reader, sum[:], crypto.SHA256)
	if err != nil {
		b.Fatal(err)
	}
	if err := wcrypto.VerifySignatureSHA256(wcrypto.AlgRSASHA256, pub, signed, &sum, sig); err != nil {
		b.Fatal(err)
	}
	const pool = 500
	for _, c := range []struct {
		name string
		draw func() (testtraffic.Message, error)
		ok   bool
	}{{"mix", g.Next, true}, {"fresh", g.Fresh, true}, {"garbage", g.FreshGarbage, false}} {
		msgs := make([][]byte, pool)
		size := 0
		for i := range msgs {
			m, err := c.draw()
			if err != nil {
				b.Fatal(err)
			}
			msgs[i] = m.Signed
			size += len(m.Signed)
		}
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			run := func(msg []byte) {
				res, err := e.Process(msg, pol, now)
				if err == nil {
					err = pol.Check(ctx, res, now)
				}
				var we *wss.Error
				switch {
				case c.ok && err != nil:
					b.Fatal(err)
				case !c.ok && (!errors.As(err, &we) || we.Reason != wss.ReasonSignature):
					b.Fatalf("garbage: %v, want a signature failure", err)
				}
			}
			i := 0
			allocs, bytes := benchMem(func() { run(msgs[i%pool]); i++ })
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var domT, rsaT time.Duration
			for b.Loop() {
				t0 := threadCPU()
				run(msgs[i%pool])
				t1 := threadCPU()
				if err := wcrypto.VerifySignatureSHA256(wcrypto.AlgRSASHA256, pub, signed, &sum, sig); err != nil {
					b.Fatal(err)
				}
				rsaT += threadCPU() - t1
				domT += t1 - t0
				i++
			}
			n := float64(b.N)
			b.ReportMetric(float64(domT.Nanoseconds())/n, "ns/op")
			b.ReportMetric(allocs, "allocs/op")
			b.ReportMetric(bytes, "B/op")
			b.ReportMetric(float64(size)/pool, "msg-bytes")
			b.ReportMetric(float64(rsaT.Nanoseconds())/n/1e3, "rsa-µs")
			b.ReportMetric(float64(domT)/float64(rsaT), "x-rsa")
			fmt.Printf("%s: %.1f µs/msg (thread CPU), %.2fx one RSA-2048 verify, %.0f allocs, %.0f B/msg, %.0f bytes/msg\n",
				b.Name(), float64(domT.Nanoseconds())/n/1e3, float64(domT)/float64(rsaT), allocs, bytes, float64(size)/pool)
		})
	}
}

// freshRig is what BenchmarkFresh and TestProcessAllocs run on: the
// example partner's key, a policy trusting it (replay off, so a message may
// be processed again), a DOM engine and a traffic generator at a fixed time.
type freshRig struct {
	kp  *wcrypto.KeyPair
	pol *wss.Policy
	e   *Engine
	g   *testtraffic.Generator
	now time.Time
}

func newFreshRig(tb testing.TB) freshRig {
	tb.Helper()
	keys := filepath.Join("..", "..", "examples", "keys")
	kp, err := wcrypto.LoadKeyPair(wcrypto.KeyFileOptions{
		CertFile: filepath.Join(keys, "partner.crt"), KeyFile: filepath.Join(keys, "partner.key")})
	if err != nil {
		tb.Fatal(err)
	}
	p := config.DefaultPolicy()
	p.Replay = "off"
	p.Trust.CAFiles = []string{filepath.Join(keys, "ca.crt")}
	p.Trust.KnownCertFiles = []string{filepath.Join(keys, "partner.crt")}
	pol, err := wss.Compile("fresh", p, nil, reload.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	e, err := New(xmlscan.DefaultConfig())
	if err != nil {
		tb.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	return freshRig{kp: kp, pol: pol, e: e, g: testtraffic.New(7, kp, func() time.Time { return now }), now: now}
}
