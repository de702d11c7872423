package gateway

import (
	"context"
	"crypto/tls"
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
	"github.com/wssgw/wssgw/internal/testpki"
)

// TestTLSHandshakeFailuresLoggedAndCounted: a real mTLS data listener.
// A client without a certificate, one with a certificate of another CA and
// one speaking plain HTTP each leave a log line (JSON, through slog) and
// move wssgw_tls_handshake_failures_total by reason; a client with a good
// certificate is served.
func TestTLSHandshakeFailuresLoggedAndCounted(t *testing.T) {
	dir := t.TempDir()
	ca := testpki.NewCA(t, "partners")
	other := testpki.NewCA(t, "stranger")
	server := ca.Issue(t, dir, "wssgw.example")
	good, stranger := ca.Issue(t, dir, "partner-a"), other.Issue(t, t.TempDir(), "partner-a")
	backend := soapBackend(t, 200, "text/xml", okResponse)

	cfg := config.Default()
	cfg.Listen, cfg.Admin.Listen = "127.0.0.1:0", "127.0.0.1:0"
	cfg.TLS = config.ServerTLS{CertFile: server.CertFile, KeyFile: server.KeyFile, ClientCAFile: ca.WriteCert(t, dir), ClientAuth: "require", MinVersion: "1.2"}
	cfg.Routes = []config.Route{{Name: "orders", Path: "/orders", Backend: backend.URL}}
	cfg.Shutdown.Delay, cfg.Shutdown.DrainTimeout = 0, time.Second
	cfg.ApplyDefaults()
	require.NoError(t, cfg.Validate())
	var logs logBuffer
	m := metrics.New(metrics.BuildInfo{Version: "test"})
	srv, err := NewServer(&cfg, m, slog.New(slog.NewJSONHandler(&logs, nil)))
	require.NoError(t, err)
	addrs := make(chan net.Addr, 1)
	srv.OnListen = func(data, _ net.Addr) { addrs <- data }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() { cancel(); require.NoError(t, <-done) })
	addr := (<-addrs).String()

	counter := func(reason string) float64 {
		return gathered(t, m, metrics.NameTLSHandshakeFailures, map[string]string{metrics.LabelListener: metrics.ListenerData, metrics.LabelReason: reason})
	}
	for _, r := range metrics.TLSHandshakeReasons() {
		assert.Equal(t, 0.0, counter(r), "series %s exists at zero", r)
	}
	post := func(cert *tls.Certificate) (*http.Response, error) {
		tc := &tls.Config{RootCAs: ca.Pool(), ServerName: "wssgw.example", MinVersion: tls.VersionTLS12}
		if cert != nil {
			// Sent whatever CAs the server asks for, as a misconfigured
			// partner does (Go's client would otherwise send none).
			tc.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
		}
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: tc}, Timeout: 5 * time.Second}
		defer c.CloseIdleConnections()
		resp, err := c.Post("https://"+addr+"/orders", "text/xml; charset=utf-8", strings.NewReader(testEnvelope))
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return resp, err
	}
	// waitFor waits for the server's side of a failed handshake: the client
	// may see its error before the server logs it.
	waitFor := func(reason string, want float64) {
		t.Helper()
		require.Eventually(t, func() bool { return counter(reason) == want }, 5*time.Second, 10*time.Millisecond,
			"%s: %v; log:\n%s", reason, counter(reason), logs.String())
	}

	resp, err := post(nil)
	if err == nil { // TLS 1.3: the client learns of the refusal on its first read
		t.Fatalf("served without a client certificate: %d", resp.StatusCode)
	}
	waitFor(metrics.TLSNoCertificate, 1)

	sc := stranger.TLS(t)
	_, err = post(&sc)
	require.Error(t, err)
	waitFor(metrics.TLSBadCertificate, 1)

	// Plain HTTP to the TLS port.
	plain, err := http.Post("http://"+addr+"/orders", "text/xml", strings.NewReader(testEnvelope))
	if err == nil {
		plain.Body.Close()
	}
	waitFor(metrics.TLSProtocol, 1)

	gc := good.TLS(t)
	resp, err = post(&gc)
	require.NoError(t, err)
	assert.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, 0.0, counter(metrics.TLSOther))

	var lines []map[string]any
	for _, rec := range logs.all(t) {
		if rec["msg"] == "tls handshake failed" {
			lines = append(lines, rec)
		}
	}
	require.Len(t, lines, 3, "%s", logs.String())
	byReason := map[any]map[string]any{}
	for _, l := range lines {
		byReason[l["reason"]] = l
		assert.Equal(t, "data", l["listener"])
		assert.Contains(t, l["remote"], "127.0.0.1:")
	}
	assert.Equal(t, "WARN", byReason[metrics.TLSNoCertificate]["level"])
	assert.Contains(t, byReason[metrics.TLSNoCertificate]["error"], "certificate")
	assert.Equal(t, "WARN", byReason[metrics.TLSBadCertificate]["level"])
	assert.Contains(t, byReason[metrics.TLSBadCertificate]["error"], "certificate")
	assert.Equal(t, "INFO", byReason[metrics.TLSProtocol]["level"])
}

func TestHandshakeReason(t *testing.T) {
	for detail, want := range map[string]string{
		"tls: client didn't provide a certificate":                                         metrics.TLSNoCertificate,
		"tls: failed to verify certificate: x509: certificate signed by unknown authority": metrics.TLSBadCertificate,
		"remote error: tls: bad certificate":                                               metrics.TLSBadCertificate,
		"remote error: tls: unknown certificate authority":                                 metrics.TLSBadCertificate,
		"client sent an HTTP request to an HTTPS server":                                   metrics.TLSProtocol,
		"tls: first record does not look like a TLS handshake":                             metrics.TLSProtocol,
		"tls: client offered only unsupported versions: [301]":                             metrics.TLSProtocol,
		"tls: no cipher suite supported by both client and server":                         metrics.TLSProtocol,
		"EOF": metrics.TLSOther,
		"read tcp 127.0.0.1:8443->127.0.0.1:5: i/o timeout": metrics.TLSOther,
	} {
		assert.Equal(t, want, handshakeReason(detail), detail)
	}
}

// gathered is the value of a counter series; -1 when it does not exist.
func gathered(t *testing.T, m *metrics.Metrics, name string, want map[string]string) float64 {
	t.Helper()
	fams, err := m.Registry().Gather()
	require.NoError(t, err)
	for _, fam := range fams {
		if fam.GetName() != name {
			continue
		}
	series:
		for _, s := range fam.Metric {
			for _, l := range s.Label {
				if v, ok := want[l.GetName()]; ok && v != l.GetValue() {
					continue series
				}
			}
			return s.Counter.GetValue()
		}
	}
	return -1
}

// TestProxyErrorLogged: the reverse proxy's own line for a backend that
// cuts its response goes to slog, named by route, beside the request line.
func TestProxyErrorLogged(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("<partial>"))
		w.(http.Flusher).Flush()
		conn, _, _ := http.NewResponseController(w).Hijack()
		conn.Close()
	}))
	t.Cleanup(backend.Close)
	cfg := config.Default()
	cfg.Routes = []config.Route{{Name: "orders", Path: "/orders", Backend: backend.URL}}
	cfg.ApplyDefaults()
	require.NoError(t, cfg.Validate())
	var logs logBuffer
	gw, err := New(&cfg, metrics.New(metrics.BuildInfo{Version: "test"}), slog.New(slog.NewJSONHandler(&logs, nil)))
	require.NoError(t, err)
	t.Cleanup(gw.Close)
	srv := httptest.NewServer(gw)
	t.Cleanup(srv.Close)
	resp, err := http.Post(srv.URL+"/orders", "text/xml", strings.NewReader(testEnvelope))
	if err == nil {
		_, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	var proxy map[string]any
	require.Eventually(t, func() bool {
		for _, rec := range logs.all(t) {
			if rec["msg"] == "net/http" && rec["source"] == "proxy" {
				proxy = rec
				return true
			}
		}
		return false
	}, 2*time.Second, 10*time.Millisecond, "%s", logs.String())
	assert.Equal(t, "WARN", proxy["level"])
	assert.Equal(t, "orders", proxy["route"])
	assert.Contains(t, proxy["error"], "body copy")
	assert.NotContains(t, logs.String(), "<partial>", "bodies are never logged")
}
