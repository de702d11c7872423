package template

import (
	"runtime"
	"testing"

	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/signer"
)

// BenchmarkHit times the template path alone on a warm generic-Body hit,
// so that its B/op and allocs/op are the hit's own (BenchmarkEngines also
// runs the DOM engine and the floor in its loop):
//
//	go test -run '^$' -bench 'Hit/' -benchmem ./internal/template
func BenchmarkHit(b *testing.B) {
	for _, c := range []struct {
		name  string
		items int
	}{{"sign-1KiB", 5}, {"sign-4KiB", 20}, {"sign-1MiB", 11000}} {
		b.Run(c.name, func(b *testing.B) {
			f := newFixture(b, nil, testOptions())
			if _, err := f.engine.Process(f.sign(b, benchEnvelope(c.items, "Item"), f.rsa, signer.RefBST, f.now, nil), f.policy, f.now); err != nil {
				b.Fatal(err)
			}
			msg := f.sign(b, benchEnvelope(c.items, "Item"), f.rsa, signer.RefBST, f.now, nil)
			for range genericShadowHits + 1 {
				res, err := f.engine.Process(msg, f.policy, f.now)
				if err != nil || res.Lookup != metrics.LookupHit {
					b.Fatalf("not a hit: %v", err)
				}
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(msg)))
			for b.Loop() {
				if _, err := f.engine.Process(msg, f.policy, f.now); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// hitAllocs is what one hit on msg allocates, averaged over 100 hits
// before a benchmark's loop: BenchmarkEngines's B/op and allocs/op are
// mostly the DOM engine's, which runs in the same loop.
func hitAllocs(b *testing.B, f *fixture, msg []byte) (bytes, allocs float64) {
	const n = 100
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	for range n {
		if _, err := f.engine.Process(msg, f.policy, f.now); err != nil {
			b.Fatal(err)
		}
	}
	runtime.ReadMemStats(&m1)
	return float64(m1.TotalAlloc-m0.TotalAlloc) / n, float64(m1.Mallocs-m0.Mallocs) / n
}
