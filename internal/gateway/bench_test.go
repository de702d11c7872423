package gateway

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/metrics"
)

// cannedTransport answers every request from memory, so the benchmark
// measures the gateway's own work per request, not the network.
type cannedTransport struct{ body []byte }

func (c cannedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
	}
	return &http.Response{
		StatusCode:    http.StatusOK,
		Header:        http.Header{"Content-Type": {"text/xml; charset=utf-8"}},
		Body:          io.NopCloser(bytes.NewReader(c.body)),
		ContentLength: int64(len(c.body)),
		Request:       r,
	}, nil
}

// BenchmarkServeHTTP is the pass-through cost of one 4 KiB SOAP exchange
// inside the gateway: checks, routing, gate, proxying, metrics and the log
// line; skip-gate is the same without the gate (unsafeSkipGate); limited
// is gated with the route and per-client limits on (never reached), the
// cost of checking them.
func BenchmarkServeHTTP(b *testing.B) {
	b.Run("gated", func(b *testing.B) { benchmarkServeHTTP(b, false, config.RouteLimits{}) })
	b.Run("skip-gate", func(b *testing.B) { benchmarkServeHTTP(b, true, config.RouteLimits{}) })
	high := config.Limit{Rate: 1e9, MaxConcurrent: 1 << 20}
	b.Run("limited", func(b *testing.B) { benchmarkServeHTTP(b, false, config.RouteLimits{Total: high, PerClient: high}) })
}

func benchmarkServeHTTP(b *testing.B, skipGate bool, limits config.RouteLimits) {
	cfg := config.Default()
	cfg.Routes = []config.Route{{Name: "orders", Path: "/orders", Backend: "http://127.0.0.1:1", UnsafeSkipGate: skipGate, Limits: limits}}
	cfg.ApplyDefaults()
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	gw, err := New(&cfg, metrics.New(metrics.BuildInfo{}), log)
	if err != nil {
		b.Fatal(err)
	}
	const open, end = `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><m:Echo xmlns:m="urn:bench">`, `</m:Echo></s:Body></s:Envelope>`
	payload := []byte(open + strings.Repeat("x", 4096-len(open)-len(end)) + end)
	// The route's transport with the backend replaced: the body idle
	// timeout (stall.go) is part of every exchange's cost.
	gw.routes[0].proxy.Transport = stallTransport{cannedTransport{body: payload}, config.DefaultBackendBodyIdle}
	b.ReportAllocs()
	b.SetBytes(int64(2 * len(payload)))
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/orders", bytes.NewReader(payload))
		req.Header.Set("Content-Type", "text/xml; charset=utf-8")
		gw.ServeHTTP(httptest.NewRecorder(), req)
	}
}
