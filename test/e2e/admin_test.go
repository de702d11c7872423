package e2e

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func get(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	return resp.StatusCode, readAll(t, resp)
}

func scrape(t *testing.T, g *gateway) map[string]*dto.MetricFamily {
	t.Helper()
	status, body := get(t, g.admin+"/metrics")
	require.Equal(t, http.StatusOK, status)
	problems, err := promlint.New(bytes.NewReader(body)).Lint()
	require.NoError(t, err)
	assert.Empty(t, problems, "promlint")
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	require.NoError(t, err, "exposition does not parse")
	return families
}

// value finds the sample of a family whose labels include want.
func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	t.Helper()
	fam, ok := fams[name]
	require.True(t, ok, "metric %s missing", name)
	for _, m := range fam.Metric {
		if matches(m, want) {
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue()
			case m.Gauge != nil:
				return m.Gauge.GetValue()
			case m.Histogram != nil:
				return float64(m.Histogram.GetSampleCount())
			}
		}
	}
	t.Fatalf("no %s sample with labels %v", name, want)
	return 0
}

func matches(m *dto.Metric, want map[string]string) bool {
	n := 0
	for _, l := range m.Label {
		if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
			n++
		}
	}
	return n == len(want)
}

func TestMetricsAndHealth(t *testing.T) {
	backend := newRecordingBackend(t, []byte("<ok/>"), "text/xml")
	gw := startGateway(t, routeConfig(backend.URL, ""))
	for range 3 {
		readAll(t, gw.post("/orders", "text/xml", strings.NewReader(tinyEnvelope)))
	}
	resp, err := http.Get(gw.data + "/orders")
	require.NoError(t, err)
	readAll(t, resp)

	fams := scrape(t, gw)
	assert.Equal(t, 3.0, value(t, fams, "wssgw_requests_total", map[string]string{"route": "orders", "outcome": "ok"}))
	assert.Equal(t, 1.0, value(t, fams, "wssgw_requests_total", map[string]string{"route": "orders", "outcome": "method_not_allowed"}))
	assert.Equal(t, 0.0, value(t, fams, "wssgw_requests_total", map[string]string{"route": "orders", "outcome": "backend_timeout"}), "outcome series exist before they happen")
	assert.Equal(t, 4.0, value(t, fams, "wssgw_request_duration_seconds", map[string]string{"route": "orders"}))
	assert.Equal(t, 3.0, value(t, fams, "wssgw_backend_duration_seconds", map[string]string{"route": "orders"}))
	assert.Equal(t, float64(3*len(tinyEnvelope)), value(t, fams, "wssgw_received_bytes_total", map[string]string{"route": "orders"}))
	assert.Equal(t, 0.0, value(t, fams, "wssgw_requests_in_flight", nil))
	assert.Equal(t, 1.0, value(t, fams, "wssgw_ready", nil))
	assert.Equal(t, 1.0, value(t, fams, "wssgw_build_info", map[string]string{"version": buildVersion, "revision": "e2ecommit"}))
	for _, name := range []string{"go_goroutines", "process_resident_memory_bytes"} {
		assert.Contains(t, fams, name)
	}
	// The fast-path histogram buckets must resolve tens of microseconds.
	h := fams["wssgw_request_duration_seconds"].Metric[0].Histogram
	assert.LessOrEqual(t, h.Bucket[0].GetUpperBound(), 50e-6)

	status, body := get(t, gw.admin+"/healthz")
	assert.Equal(t, http.StatusOK, status, string(body))
	status, _ = get(t, gw.admin+"/readyz")
	assert.Equal(t, http.StatusOK, status)
	status, _ = get(t, gw.admin+"/debug/pprof/")
	assert.Equal(t, http.StatusNotFound, status, "pprof is off unless enabled")
	status, _ = get(t, gw.data+"/metrics")
	assert.NotEqual(t, http.StatusOK, status, "metrics must not be on the data port")

	// Log lines arrive through a pipe; give the last one a moment.
	require.Eventually(t, func() bool { return len(gw.logs.find("request")) >= 5 }, 5*time.Second, 5*time.Millisecond)
	logs := gw.logs.find("request")
	require.Len(t, logs, 5, "one line per request, the /metrics probe on the data port included")
	assert.Equal(t, "no_route", logs[4]["outcome"])
	for _, l := range logs {
		for _, k := range []string{"id", "route", "status", "duration_ms", "outcome"} {
			assert.Contains(t, l, k)
		}
	}
}

func TestPprofWhenEnabled(t *testing.T) {
	backend := newRecordingBackend(t, []byte("<ok/>"), "text/xml")
	gw := startGateway(t, strings.Replace(routeConfig(backend.URL, ""), "admin: {listen: 127.0.0.1:0}", "admin: {listen: 127.0.0.1:0, pprof: true}", 1))
	status, _ := get(t, gw.admin+"/debug/pprof/")
	assert.Equal(t, http.StatusOK, status)
}

// TestGracefulDrain: on SIGTERM readiness turns false, new connections are
// refused, the in-flight request completes, and the process exits 0.
func TestGracefulDrain(t *testing.T) {
	arrived, release := make(chan struct{}), make(chan struct{})
	backend := newRecordingBackend(t, nil, "text/xml")
	backend.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-release
		w.Header().Set("Content-Type", "text/xml")
		_, _ = w.Write([]byte("<done/>"))
	})
	gw := startGateway(t, routeConfig(backend.URL, ""))

	type result struct {
		status int
		body   string
		err    error
	}
	inflight := make(chan result, 1)
	go func() {
		resp, err := http.Post(gw.data+"/orders", "text/xml", strings.NewReader(tinyEnvelope))
		if err != nil {
			inflight <- result{err: err}
			return
		}
		b := readAll(t, resp)
		inflight <- result{status: resp.StatusCode, body: string(b)}
	}()
	<-arrived
	require.NoError(t, gw.cmd.Process.Signal(syscall.SIGTERM))

	require.Eventually(t, func() bool {
		status, _ := get(t, gw.admin+"/readyz")
		return status == http.StatusServiceUnavailable
	}, 5*time.Second, 10*time.Millisecond, "/readyz did not turn 503 during drain")
	require.Eventually(t, func() bool {
		_, err := http.Post(gw.data+"/orders", "text/xml", strings.NewReader(tinyEnvelope))
		return err != nil
	}, 5*time.Second, 10*time.Millisecond, "the data listener still accepts during drain")

	close(release)
	r := <-inflight
	require.NoError(t, r.err)
	assert.Equal(t, http.StatusOK, r.status)
	assert.Equal(t, "<done/>", r.body)
	select {
	case err := <-gw.done:
		assert.NoError(t, err, "wssgw must exit 0 after a drain")
	case <-time.After(10 * time.Second):
		t.Fatal("wssgw did not exit after draining")
	}
	assert.NotEmpty(t, gw.logs.find("draining"))
}

// TestDrainTimeout: a request that outlives shutdown.drainTimeout is cut
// (its backend request cancelled, a 503 fault: outcomes_test.go checks the
// drain_cut log line) and the process still exits 0, in bounded time.
func TestDrainTimeout(t *testing.T) {
	arrived := make(chan struct{})
	backend := newRecordingBackend(t, nil, "text/xml")
	backend.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Reading the body lets the server notice the gateway closing the
		// connection (net/http's background read), which ends this handler.
		_, _ = io.Copy(io.Discard, r.Body)
		close(arrived)
		<-r.Context().Done()
	})
	gw := startGateway(t, strings.Replace(routeConfig(backend.URL, ""), "drainTimeout: 10s", "drainTimeout: 300ms", 1))
	statusc := make(chan int, 1)
	go func() {
		resp, err := http.Post(gw.data+"/orders", "text/xml", strings.NewReader(tinyEnvelope))
		if err != nil {
			statusc <- 0
			return
		}
		resp.Body.Close()
		statusc <- resp.StatusCode
	}()
	<-arrived
	start := time.Now()
	require.NoError(t, gw.cmd.Process.Signal(syscall.SIGINT))
	select {
	case err := <-gw.done:
		assert.NoError(t, err)
		assert.Less(t, time.Since(start), 5*time.Second)
	case <-time.After(10 * time.Second):
		t.Fatal("wssgw did not exit after the drain timeout")
	}
	assert.Equal(t, http.StatusServiceUnavailable, <-statusc, "the straggler is told the gateway shuts down")
}
