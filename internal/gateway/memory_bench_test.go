package gateway

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	wmetrics "github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/testpki"
	"github.com/wssgw/wssgw/internal/testtraffic"
)

// BenchmarkSecuredLarge is one signed ~7 MiB request through a secured
// route to a canned backend: B/op is what one such request allocates, and
// peak-heap-MiB the most the heap held above its level before the run
// while the requests ran one at a time (issue 16: the per-request
// amplification).
func BenchmarkSecuredLarge(b *testing.B) {
	for _, tampered := range []bool{false, true} {
		for _, templates := range []bool{false, true} {
			name := map[bool]string{false: "valid", true: "tampered"}[tampered] + map[bool]string{false: "/dom", true: "/templates"}[templates]
			b.Run(name, func(b *testing.B) { benchmarkSecuredLarge(b, tampered, templates) })
		}
	}
}

func benchmarkSecuredLarge(b *testing.B, tampered, templates bool) {
	dir := b.TempDir()
	ca := testpki.NewCA(b, "wssgw memory CA")
	caFile, partner := ca.WriteCert(b, dir), ca.Issue(b, dir, "partner")
	cfg := config.Default()
	p := config.DefaultPolicy()
	p.Trust.CAFiles = []string{caFile}
	p.Replay = "off"
	cfg.Policies = map[string]config.Policy{"partner": p}
	cfg.Templates.Enabled = templates
	cfg.Routes = []config.Route{{Name: "orders", Path: "/orders", Backend: "http://127.0.0.1:1", Policy: "partner"}}
	cfg.ApplyDefaults()
	require.NoError(b, cfg.Validate())
	gw, err := New(&cfg, wmetrics.New(wmetrics.BuildInfo{}), slog.New(slog.NewJSONHandler(io.Discard, nil)))
	require.NoError(b, err)
	b.Cleanup(gw.Close)
	gw.routes[0].proxy.Transport = cannedTransport{body: []byte(`<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body/></soapenv:Envelope>`)}
	o := signer.DefaultOptions()
	o.Signer, o.Certificate, o.TTL = partner.Key, partner.Cert, time.Hour
	body, err := signer.Secure(testtraffic.LargeEnvelope(7<<20), o)
	require.NoError(b, err)
	want := http.StatusOK
	if tampered {
		i := bytes.LastIndex(body, []byte("lorem"))
		body[i] = 'L'
		want = http.StatusInternalServerError
	}
	peak := heapPeak(b)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/orders", bytes.NewReader(body))
		req.Header.Set("Content-Type", "text/xml; charset=utf-8")
		rec := httptest.NewRecorder()
		gw.ServeHTTP(rec, req)
		if rec.Code != want {
			b.Fatalf("status %d, want %d: %s", rec.Code, want, rec.Body.String())
		}
	}
	b.ReportMetric(float64(peak())/(1<<20), "peak-heap-MiB")
}

// heapPeak samples the live heap every millisecond from now until the
// returned function is called, which reports the highest sample above the
// level at the start.
func heapPeak(b *testing.B) func() uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	base := s[0].Value.Uint64()
	var top atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > base && v-base > top.Load() {
				top.Store(v - base)
			}
		}
	}()
	return func() uint64 {
		close(done)
		wg.Wait()
		return top.Load()
	}
}
