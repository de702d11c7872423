package gateway

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/wssgw/wssgw/bench/proc"
	"github.com/wssgw/wssgw/internal/config"
	wcrypto "github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/soap"
	"github.com/wssgw/wssgw/internal/testpki"
	"github.com/wssgw/wssgw/internal/testtraffic"
)

// freshBench is a gateway with the bench-proxy mix route (templates on,
// replay off so that hits can repeat) and a canned backend, and the
// generator of its traffic.
type freshBench struct {
	gw *Gateway
	g  *testtraffic.Generator
	m  *metrics.Metrics
}

func newFreshBench(b testing.TB, more func(*config.Config)) *freshBench {
	b.Helper()
	dir := b.TempDir()
	ca := testpki.NewCA(b, "wssgw fresh CA")
	caFile := ca.WriteCert(b, dir)
	partner := ca.IssueRSA(b, dir, "partner")
	cfg := config.Default()
	p := config.DefaultPolicy()
	p.Trust.CAFiles = []string{caFile}
	p.Trust.KnownCertFiles = []string{partner.CertFile}
	p.Replay = "off"
	cfg.Policies = map[string]config.Policy{"mix": p}
	cfg.Templates.Enabled = true
	cfg.Routes = []config.Route{{Name: "mix", Path: "/mix", Backend: "http://127.0.0.1:1", Policy: "mix"}}
	if more != nil {
		more(&cfg)
	}
	cfg.ApplyDefaults()
	if err := cfg.Validate(); err != nil {
		b.Fatal(err)
	}
	m := metrics.New(metrics.BuildInfo{})
	gw, err := New(&cfg, m, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(gw.Close)
	gw.routes[0].proxy.Transport = stallTransport{cannedTransport{body: []byte(okResponse)}, config.DefaultBackendBodyIdle}
	kp := &wcrypto.KeyPair{Signer: partner.Key, Certificate: partner.Cert}
	return &freshBench{gw: gw, g: testtraffic.New(1, kp, time.Now), m: m}
}

// messages draws n messages with draw.
func (f *freshBench) messages(b testing.TB, n int, draw func() (testtraffic.Message, error)) [][]byte {
	b.Helper()
	out := make([][]byte, n)
	for i := range out {
		m, err := draw()
		if err != nil {
			b.Fatal(err)
		}
		out[i] = m.Signed
	}
	return out
}

func (f *freshBench) serve(msg []byte) int {
	return f.serveRec(msg).Code
}

func (f *freshBench) serveRec(msg []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/mix", bytes.NewReader(msg))
	if bytes.Contains(msg[:min(len(msg), 300)], []byte(soap.NS12)) {
		req.Header.Set("Content-Type", `application/soap+xml; charset=utf-8; action="urn:bench/Echo"`)
	} else {
		req.Header.Set("Content-Type", "text/xml; charset=utf-8")
		req.Header.Set("SOAPAction", `"urn:bench/Echo"`)
	}
	rec := httptest.NewRecorder()
	f.gw.ServeHTTP(rec, req)
	return rec
}

// BenchmarkFreshShapes is the gateway's whole cost of one request of the
// bench-proxy mix route (issue 14), in process CPU time, with the ratios
// printed: a template hit of the realistic mix, a validly signed fresh
// shape (testtraffic.Fresh: DOM engine, never learned: each is seen once,
// templates.learnAfter 2) and signed-looking garbage
// (testtraffic.FreshGarbage), then hits again beside the templates the
// fresh shapes left. first-sight is the behaviour before learnAfter
// (issue 14): every fresh shape learned at the default rate, 10/s.
// learn-all learns every fresh shape (no rate bound): what learning one
// costs, and hits beside 1,000 junk templates. Fresh messages are all
// distinct: run it with -benchtime Nx, N <= 1000.
//
// These verify every fresh shape, so the first-sight lanes are off
// (firstSightShare 0); shed is what a fresh shape costs when its lane
// refuses it: a hit, then fresh shapes and garbage each answered 503.
func BenchmarkFreshShapes(b *testing.B) {
	noLanes := func(more func(*config.Config)) func(*config.Config) {
		return func(c *config.Config) {
			c.Server.Memory.FirstSightShare = 0
			if more != nil {
				more(c)
			}
		}
	}
	b.Run("rate-10", func(b *testing.B) { benchmarkFreshShapes(b, noLanes(nil)) })
	b.Run("first-sight", func(b *testing.B) {
		benchmarkFreshShapes(b, noLanes(func(c *config.Config) { c.Templates.LearnAfter = 1 }))
	})
	b.Run("learn-all", func(b *testing.B) {
		benchmarkFreshShapes(b, noLanes(func(c *config.Config) {
			c.Templates.LearnPerSecond, c.Templates.LearnBurst, c.Templates.LearnAfter = 1e6, 1e6, 1
		}))
	})
	b.Run("shed", benchmarkShed)
}

// freshRun measures one kind of request of a warmed freshBench in
// process CPU time; ok says whether a status is the expected one.
type freshRun struct {
	f   *freshBench
	cpu map[string]float64
	// each runs before every request (the shed run keeps hits flowing).
	each func()
}

func (r *freshRun) run(b *testing.B, name string, msgs [][]byte, ok func(int) bool) {
	b.Run(name, func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		start := proc.SelfCPU()
		// The label lets -cpuprofile's samples be told apart by
		// sub-benchmark: go tool pprof -tagfocus sub=fresh.
		pprof.Do(context.Background(), pprof.Labels("sub", name), func(context.Context) {
			for b.Loop() {
				if r.each != nil {
					r.each()
				}
				if rec := r.f.serveRec(msgs[i%len(msgs)]); !ok(rec.Code) {
					b.Fatalf("%s: status %d: %s", name, rec.Code, rec.Body)
				}
				i++
			}
		})
		r.cpu[name] = float64(proc.SelfCPU()-start) / float64(b.N) / 1e3
		b.ReportMetric(r.cpu[name], "cpu-µs/op")
	})
}

func status(want int) func(int) bool { return func(got int) bool { return got == want } }

// warmFresh is a freshBench whose mix shapes are learned and past the
// generic Body's checks, and 200 hits of it.
func warmFresh(b *testing.B, more func(*config.Config)) (*freshBench, [][]byte) {
	f := newFreshBench(b, more)
	hits := f.messages(b, 200, f.g.Next)
	for range 3 { // learn every shape, then past the generic Body's checks
		for _, m := range hits {
			f.serve(m)
		}
		time.Sleep(200 * time.Millisecond) // the learning rate
	}
	return f, hits
}

func benchmarkFreshShapes(b *testing.B, more func(*config.Config)) {
	f, hits := warmFresh(b, more)
	const pool = 1000
	r := &freshRun{f: f, cpu: map[string]float64{}}
	fresh, garbage := f.messages(b, pool, f.g.Fresh), f.messages(b, pool, f.g.FreshGarbage)
	r.run(b, "hit", hits, status(http.StatusOK))
	r.run(b, "fresh", fresh, status(http.StatusOK))
	r.run(b, "garbage", garbage, status(http.StatusInternalServerError))
	r.run(b, "hit-after", hits, status(http.StatusOK))
	if cpu := r.cpu; cpu["hit"] > 0 {
		fmt.Printf("%s: process CPU per request: fresh/hit %.2f, garbage/hit %.2f, hit-after/hit %.2f\n",
			b.Name(), cpu["fresh"]/cpu["hit"], cpu["garbage"]/cpu["hit"], cpu["hit-after"]/cpu["hit"])
	}
}

// benchmarkShed: a first-sight lane so slow (firstSightShare 1e-6) that
// after its first message it refuses every other for the whole run, and
// hits noted as flowing throughout: what the gateway spends on a fresh
// shape it sheds (body, failed match, shape walk, the 503 fault, the log
// line, the metrics). Each lane (the flood's key, lane 0 for claims never
// accepted) admits its first message: at most a few 200s per run.
func benchmarkShed(b *testing.B) {
	f, hits := warmFresh(b, func(c *config.Config) { c.Server.Memory.FirstSightShare = 1e-6 })
	const pool = 1000
	r := &freshRun{f: f, cpu: map[string]float64{}}
	fresh, garbage := f.messages(b, pool, f.g.Fresh), f.messages(b, pool, f.g.FreshGarbage)
	r.run(b, "hit", hits, status(http.StatusOK))
	admitted := 0
	shedOrFirst := func(code int) bool {
		if code == http.StatusOK || code == http.StatusInternalServerError {
			admitted++ // a lane's first message: verified (garbage: refused)
		}
		return code == http.StatusServiceUnavailable || admitted <= 8
	}
	r.each = f.gw.budget.NoteHit
	r.run(b, "fresh-shed", fresh, shedOrFirst)
	r.run(b, "garbage-shed", garbage, shedOrFirst)
	if cpu := r.cpu; cpu["hit"] > 0 {
		fmt.Printf("%s: process CPU per request: fresh shed/hit %.2f, garbage shed/hit %.2f (%d lane admissions)\n",
			b.Name(), cpu["fresh-shed"]/cpu["hit"], cpu["garbage-shed"]/cpu["hit"], admitted)
	}
}
