package gateway

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/testpki"
)

// front is a gateway for one route to backend, served by httptest.
type front struct {
	*httptest.Server
	metrics *metrics.Metrics
}

func newFront(t *testing.T, backend string, mutate func(*config.Route)) *front {
	t.Helper()
	cfg := config.Default()
	cfg.Routes = []config.Route{{Name: "orders", Path: "/orders", Backend: backend}}
	cfg.ApplyDefaults()
	if mutate != nil {
		mutate(&cfg.Routes[0])
	}
	require.NoError(t, cfg.Validate())
	m := metrics.New(metrics.BuildInfo{Version: "test"})
	gw, err := New(&cfg, m, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	f := &front{Server: httptest.NewServer(gw), metrics: m}
	t.Cleanup(f.Close)
	return f
}

// outcome reads wssgw_requests_total for the route and an outcome.
func (f *front) outcome(t *testing.T, o metrics.Outcome) float64 {
	t.Helper()
	return f.routeOutcome(t, "orders", o)
}

// routeOutcome reads wssgw_requests_total for a route and an outcome.
func (f *front) routeOutcome(t *testing.T, route string, o metrics.Outcome) float64 {
	t.Helper()
	fams, err := f.metrics.Registry().Gather()
	require.NoError(t, err)
	for _, fam := range fams {
		if fam.GetName() != metrics.NameRequests {
			continue
		}
		for _, m := range fam.Metric {
			labels := map[string]string{}
			for _, l := range m.Label {
				labels[l.GetName()] = l.GetValue()
			}
			if labels[metrics.LabelRoute] == route && labels[metrics.LabelOutcome] == o.String() {
				return m.Counter.GetValue()
			}
		}
	}
	t.Fatalf("no series for route %s, outcome %s", route, o)
	return 0
}

func TestMatchPrefix(t *testing.T) {
	tests := map[string]struct {
		path, prefix string
		want         bool
	}{
		"ok/exact":         {"/orders", "/orders", true},
		"ok/subpath":       {"/orders/v2", "/orders", true},
		"ok/root":          {"/anything", "/", true},
		"ok/nested-prefix": {"/a/b/c", "/a/b", true},
		"fail/longer-word": {"/ordersx", "/orders", false},
		"fail/shorter":     {"/order", "/orders", false},
		"fail/other":       {"/billing", "/orders", false},
		"fail/case":        {"/Orders", "/orders", false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.want, matchPrefix(tc.path, tc.prefix))
		})
	}
	table := newRouteTable([]*route{{name: "root", prefix: "/"}, {name: "a", prefix: "/a"}, {name: "ab", prefix: "/a/b"}})
	assert.Equal(t, "ab", table.match("/a/b/c").name, "longest prefix wins")
	assert.Equal(t, "a", table.match("/a/bc").name)
	assert.Equal(t, "root", table.match("/x").name)
}

func TestClassify(t *testing.T) {
	timeout := &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
	dialTimeout := &net.OpError{Op: "dial", Net: "tcp", Err: os.ErrDeadlineExceeded}
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	tests := map[string]struct {
		err     error
		status  int
		outcome metrics.Outcome
	}{
		"fail/method":          {errMethod, 405, metrics.MethodNotAllowed},
		"fail/content-type":    {fmt.Errorf("%w: x", errContentType), 415, metrics.UnsupportedMediaType},
		"fail/no-route":        {errNoRoute, 404, metrics.Unrouted},
		"fail/upgrade":         {fmt.Errorf("%w: Upgrade header", errUpgrade), 400, metrics.BadRequest},
		"fail/path":            {fmt.Errorf("%w: dot segment", errPath), 400, metrics.BadRequest},
		"fail/backend-switch":  {&backendError{errBackendSwitch}, 502, metrics.BackendUnavailable},
		"fail/too-large":       {&http.MaxBytesError{Limit: 1}, 413, metrics.TooLarge},
		"fail/too-large-body":  {&clientBodyError{&http.MaxBytesError{Limit: 1}}, 413, metrics.TooLarge},
		"fail/client-slow":     {&clientBodyError{timeout}, 408, metrics.ClientTimeout},
		"fail/client-broken":   {&clientBodyError{errors.New("invalid byte in chunk length")}, 400, metrics.BadRequest},
		"fail/client-aborted":  {&clientBodyError{io.ErrUnexpectedEOF}, 499, metrics.ClientAbortedUpload},
		"fail/client-reset":    {&clientBodyError{&net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}}, 499, metrics.ClientAbortedUpload},
		"fail/client-h2-reset": {fmt.Errorf("%w: %w", errUploadAborted, &clientBodyError{errors.New("stream error")}), 499, metrics.ClientAbortedUpload},
		"fail/drain-cut":       {fmt.Errorf("%w: %w", errDrainCut, &clientGoneError{context.Canceled}), 503, metrics.DrainCut},
		"fail/drain-cut-body":  {fmt.Errorf("%w: %w", errDrainCut, &clientBodyError{io.ErrUnexpectedEOF}), 503, metrics.DrainCut},
		"fail/backend-stalled": {&backendError{&backendError{fmt.Errorf("%w: 30s", errBackendStalled)}}, 504, metrics.BackendStalled},
		"fail/client-gone":     {&clientGoneError{context.Canceled}, 499, metrics.ClientCanceled},
		"fail/backend-refused": {&backendError{refused}, 502, metrics.BackendUnavailable},
		"fail/backend-dial-to": {&backendError{dialTimeout}, 502, metrics.BackendUnavailable},
		"fail/backend-slow":    {&backendError{timeout}, 504, metrics.BackendTimeout},
		"fail/backend-ctx":     {&backendError{context.DeadlineExceeded}, 504, metrics.BackendTimeout},
		"fail/backend-eof":     {&backendError{io.EOF}, 502, metrics.BackendUnavailable},
		"fail/unknown":         {errors.New("boom"), 500, metrics.InternalError},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := classify(tc.err)
			assert.Equal(t, tc.status, f.status)
			assert.Equal(t, tc.outcome, f.outcome)
			assert.NotEmpty(t, f.reason)
			assert.NotContains(t, f.reason, "tcp", "reasons are generic; causes go to the log")
		})
	}
}

func TestRequestID(t *testing.T) {
	assert.Equal(t, "abc-123_X.y:z", requestID("abc-123_X.y:z"))
	for _, bad := range []string{"", "has space", "new\nline", strings.Repeat("a", 129), "<x>"} {
		id := requestID(bad)
		assert.Len(t, id, 32, "%q must be replaced", bad)
		assert.NotEqual(t, bad, id)
	}
	assert.NotEqual(t, requestID(""), requestID(""))
}

// TestSlowClientGets408: a body not received within timeouts.read.
func TestSlowClientGets408(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	t.Cleanup(backend.Close)
	f := newFront(t, backend.URL, func(r *config.Route) { r.Timeouts.Read = 200 * time.Millisecond })
	conn, err := net.Dial("tcp", f.Listener.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	_, err = fmt.Fprintf(conn, "POST /orders HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml\r\nContent-Length: 100\r\n\r\n<only-part")
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusRequestTimeout, resp.StatusCode)
	assert.Equal(t, 1.0, f.outcome(t, metrics.ClientTimeout))
}

// TestClientDisconnectCancelsBackend: a client that goes away cancels the
// backend request instead of leaving it running.
func TestClientDisconnectCancelsBackend(t *testing.T) {
	arrived, cancelled := make(chan struct{}), make(chan struct{})
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A server notices a closed connection only once it has read the
		// body (net/http's background read), as any SOAP service does.
		_, _ = io.Copy(io.Discard, r.Body)
		close(arrived)
		select {
		case <-r.Context().Done():
			close(cancelled)
		case <-time.After(10 * time.Second):
		}
	}))
	t.Cleanup(backend.Close)
	f := newFront(t, backend.URL, nil)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.URL+"/orders", strings.NewReader(testEnvelope))
	req.Header.Set("Content-Type", "text/xml")
	errc := make(chan error, 1)
	go func() { _, err := http.DefaultClient.Do(req); errc <- err }()
	<-arrived
	cancel()
	require.Error(t, <-errc)
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("backend request was not cancelled")
	}
	require.Eventually(t, func() bool { return f.outcome(t, metrics.ClientCanceled) == 1 }, 2*time.Second, 10*time.Millisecond)
}

// TestBackendAbortCutsResponse: a backend that dies mid-response must not
// produce a response that looks complete.
func TestBackendAbortCutsResponse(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("<partial>"))
		w.(http.Flusher).Flush()
		conn, _, _ := http.NewResponseController(w).Hijack()
		conn.Close()
	}))
	t.Cleanup(backend.Close)
	f := newFront(t, backend.URL, nil)
	// The client sees a cut connection: before the headers (they were still
	// buffered) or while reading the body, never a clean end.
	resp, err := http.Post(f.URL+"/orders", "text/xml", strings.NewReader(testEnvelope))
	if err == nil {
		_, err = io.ReadAll(resp.Body)
	}
	assert.Error(t, err, "a truncated response must end in an error")
	require.Eventually(t, func() bool { return f.outcome(t, metrics.BackendAborted) == 1 }, 2*time.Second, 10*time.Millisecond)
}

// TestHTTPSBackendWithClientCertificate: TLS to the backend with a CA
// bundle and a client certificate the backend requires.
func TestHTTPSBackendWithClientCertificate(t *testing.T) {
	dir := t.TempDir()
	ca := testpki.NewCA(t, "backend")
	server, client := ca.Issue(t, dir, "backend.svc"), ca.Issue(t, dir, "wssgw")
	backend := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "<hello>"+r.TLS.PeerCertificates[0].Subject.CommonName+"</hello>")
	}))
	backend.TLS = &tls.Config{Certificates: []tls.Certificate{server.TLS(t)}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: ca.Pool()}
	backend.StartTLS()
	t.Cleanup(backend.Close)
	caFile := ca.WriteCert(t, dir)

	tests := map[string]struct {
		btls   config.BackendTLS
		status int
	}{
		"ok/mtls":               {config.BackendTLS{CAFile: caFile, CertFile: client.CertFile, KeyFile: client.KeyFile, ServerName: "backend.svc"}, 200},
		"fail/no-client-cert":   {config.BackendTLS{CAFile: caFile}, 502},
		"fail/untrusted-server": {config.BackendTLS{CertFile: client.CertFile, KeyFile: client.KeyFile}, 502},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := newFront(t, backend.URL, func(r *config.Route) { r.BackendTLS = tc.btls })
			resp, err := http.Post(f.URL+"/orders", "text/xml", strings.NewReader(testEnvelope))
			require.NoError(t, err)
			body, _ := io.ReadAll(resp.Body)
			assert.Equal(t, tc.status, resp.StatusCode, string(body))
			if tc.status == 200 {
				assert.Equal(t, "<hello>wssgw</hello>", string(body))
			}
		})
	}
}
