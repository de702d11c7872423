package gateway

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/metrics"
)

// newLoggingFront is newFront with its JSON log kept.
func newLoggingFront(t *testing.T, backend string, mutate func(*config.Route)) (*front, *logBuffer) {
	t.Helper()
	cfg := config.Default()
	cfg.Routes = []config.Route{{Name: "orders", Path: "/orders", Backend: backend}}
	cfg.ApplyDefaults()
	if mutate != nil {
		mutate(&cfg.Routes[0])
	}
	require.NoError(t, cfg.Validate())
	m := metrics.New(metrics.BuildInfo{Version: "test"})
	var logs logBuffer
	gw, err := New(&cfg, m, slog.New(slog.NewJSONHandler(&logs, nil)))
	require.NoError(t, err)
	t.Cleanup(gw.Close)
	f := &front{Server: httptest.NewServer(gw), metrics: m}
	t.Cleanup(f.Close)
	return f, &logs
}

// lastRequest waits for n request log lines and returns the last.
func lastRequest(t *testing.T, logs *logBuffer, n int) map[string]any {
	t.Helper()
	require.Eventually(t, func() bool { return len(logs.requests(t)) >= n }, 5*time.Second, 5*time.Millisecond)
	lines := logs.requests(t)
	return lines[len(lines)-1]
}

// TestAbortedUpload: a client that sends half its body and closes the
// connection is client_aborted_upload (not bad_request, which is a
// malformed message), on a gated route and on a streamed one; the backend
// gets nothing on the gated route.
func TestAbortedUpload(t *testing.T) {
	for name, skip := range map[string]bool{"fail/gated": false, "fail/streamed": true} {
		t.Run(name, func(t *testing.T) {
			rec := newRecorder(t)
			f, logs := newLoggingFront(t, rec.URL, func(r *config.Route) { r.UnsafeSkipGate = skip })
			conn, err := net.Dial("tcp", f.Listener.Addr().String())
			require.NoError(t, err)
			_, err = fmt.Fprintf(conn, "POST /orders HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml\r\nContent-Length: %d\r\n\r\n%s",
				len(testEnvelope), testEnvelope[:len(testEnvelope)/2])
			require.NoError(t, err)
			time.Sleep(50 * time.Millisecond)
			require.NoError(t, conn.Close())

			l := lastRequest(t, logs, 1)
			assert.Equal(t, "client_aborted_upload", l["outcome"])
			assert.Equal(t, 499.0, l["status"])
			assert.Equal(t, float64(len(testEnvelope)/2), l["bytes_in"])
			assert.Contains(t, l["error"], "unexpected EOF")
			assert.Equal(t, 1.0, f.outcome(t, metrics.ClientAbortedUpload))
			assert.Zero(t, f.outcome(t, metrics.BadRequest))
			if !skip {
				assert.Empty(t, rec.requests(), "a truncated message was forwarded")
			}
		})
	}
}

// TestMalformedStaysBadRequest: a complete but malformed message is still
// bad_request, the client's fault, not an aborted upload.
func TestMalformedStaysBadRequest(t *testing.T) {
	rec := newRecorder(t)
	f, logs := newLoggingFront(t, rec.URL, nil)
	resp, err := http.Post(f.URL+"/orders", "text/xml", strings.NewReader("<soapenv:Envelope"))
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Equal(t, "bad_request", lastRequest(t, logs, 1)["outcome"])
}

// TestStalledStreamLogged: the log line of a streamed response cut by a
// stalled backend says backend_stalled and truncated, with the bytes that
// went out, at WARN: not a clean 200.
func TestStalledStreamLogged(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/xml")
		_, _ = io.WriteString(w, "<first-part/>") // chunked: the proxy flushes it
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(backend.Close)
	f, logs := newLoggingFront(t, backend.URL, func(r *config.Route) { r.Timeouts.BackendBodyIdle = 150 * time.Millisecond })
	resp, err := http.Post(f.URL+"/orders", "text/xml", strings.NewReader(testEnvelope))
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Error(t, err, "the client sees a cut, not a clean end")
	assert.Equal(t, "<first-part/>", string(b))

	l := lastRequest(t, logs, 1)
	assert.Equal(t, "WARN", l["level"])
	assert.Equal(t, "backend_stalled", l["outcome"])
	assert.Equal(t, true, l["truncated"])
	assert.Equal(t, 200.0, l["status"])
	assert.Equal(t, float64(len("<first-part/>")), l["bytes_out"])
	assert.Contains(t, l["error"], "timeouts.backendBodyIdle")
}

// TestRequestLogUsernameAndTruncated: the fields a cut response and a
// UsernameToken request add to the line, and only when they apply.
func TestRequestLogUsernameAndTruncated(t *testing.T) {
	var logs logBuffer
	g := &Gateway{log: slog.New(slog.NewJSONHandler(&logs, nil))}
	r := httptest.NewRequest(http.MethodPost, "/orders", nil)
	g.logRequest(r, &exchange{id: "a", status: 200, outcome: metrics.Ok, username: "alice"}, time.Millisecond)
	g.logRequest(r, &exchange{id: "b", status: 200, outcome: metrics.BackendStalled, truncated: true, sent: 13}, time.Millisecond)
	lines := logs.requests(t)
	require.Len(t, lines, 2)
	assert.Equal(t, "alice", lines[0]["username"])
	assert.NotContains(t, lines[0], "truncated")
	assert.Equal(t, true, lines[1]["truncated"])
	assert.Equal(t, "WARN", lines[1]["level"])
	assert.NotContains(t, lines[1], "username")
}
