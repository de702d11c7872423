package template

import (
	"runtime"
	"testing"
	"time"

	"github.com/wssgw/wssgw/bench/proc"
	"github.com/wssgw/wssgw/internal/metrics"
)

// BenchmarkHitMix times template hits over the realistic mix (issue 14:
// bench/templates's traffic, 12 operations, two partner stacks, lists of
// 0-100 items), beside the crypto floor of the same messages in one run:
// the engine learns from a warm-up of the mix as bench/templates does,
// then every timed message is a hit, each followed by its floor (floorOf,
// BenchmarkEngines's), so load on the machine falls on both alike. The
// excess over the floor is what a hit adds: matching, the Security
// header's steps, the canonical forms of the parts, the fast Body pass,
// the result.
//
//	go test -run '^$' -bench HitMix -benchtime 3000x ./internal/template
func BenchmarkHitMix(b *testing.B) {
	f := newFixture(b, nil, testOptions())
	g := f.traffic(1, false)
	const warmup, timed = 1500, 300
	for range warmup {
		m, err := g.Next()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.engine.Process(m.Signed, f.policy, f.now); err != nil {
			b.Fatal(err)
		}
	}
	var msgs [][]byte
	var floors []*floor
	for len(msgs) < timed {
		m, err := g.Next()
		if err != nil {
			b.Fatal(err)
		}
		res, err := f.engine.Process(m.Signed, f.policy, f.now)
		if err != nil {
			b.Fatal(err)
		}
		if res.Lookup != metrics.LookupHit {
			continue // a miss after warm-up: not a hit to time
		}
		msgs = append(msgs, m.Signed)
		floors = append(floors, floorOf(b, f, m.Signed))
	}
	// What a hit allocates, over one pass of the messages (each was hit
	// once already: pools and memos are warm).
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	var size float64
	for _, m := range msgs {
		if _, err := f.engine.Process(m, f.policy, f.now); err != nil {
			b.Fatal(err)
		}
		size += float64(len(m))
	}
	runtime.ReadMemStats(&m1)
	var tTpl, tFloor, cTpl, cFloor time.Duration
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		m, fl := msgs[i], floors[i]
		i = (i + 1) % len(msgs)
		s, c := time.Now(), proc.SelfCPU()
		if _, err := f.engine.Process(m, f.policy, f.now); err != nil {
			b.Fatal(err)
		}
		tTpl += time.Since(s)
		cTpl += proc.SelfCPU() - c
		s, c = time.Now(), proc.SelfCPU()
		if err := fl.run(); err != nil {
			b.Fatal(err)
		}
		tFloor += time.Since(s)
		cFloor += proc.SelfCPU() - c
	}
	n, k := float64(b.N), float64(len(msgs))
	b.ReportMetric(float64(tTpl.Nanoseconds())/n/1e3, "µs-template")
	b.ReportMetric(float64(tFloor.Nanoseconds())/n/1e3, "µs-floor")
	b.ReportMetric(float64(cTpl.Nanoseconds())/n/1e3, "cpu-µs-template")
	b.ReportMetric(float64(cFloor.Nanoseconds())/n/1e3, "cpu-µs-floor")
	b.ReportMetric(float64(cTpl)/float64(cFloor), "cpu-template/floor")
	b.ReportMetric(size/k/1024, "KiB/msg")
	// The hit's own (B/op and allocs/op count the floor's too).
	b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/k, "template-B/op")
	b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/k, "template-allocs/op")
}
