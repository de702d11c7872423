package gateway

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/metrics"
)

// logBuffer collects JSON log lines written by concurrent handlers.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// all returns every log line, oldest first; each must be JSON.
func (l *logBuffer) all(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.String()), "\n") {
		if line == "" {
			continue
		}
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec), "%s", line)
		out = append(out, rec)
	}
	return out
}

// requests returns the request log lines, oldest first.
func (l *logBuffer) requests(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, rec := range l.all(t) {
		if rec["msg"] == "request" {
			out = append(out, rec)
		}
	}
	return out
}

// TestRequestLogNamesSignerPolicyEngine: the request log line of a
// secured route names the policy, the engine, the verified signer
// (subject and SHA-256 thumbprint) of an accepted message, and the WS-Security
// reason of a rejected one; never the body.
func TestRequestLogNamesSignerPolicyEngine(t *testing.T) {
	k := newSigningPKI(t)
	backend := soapBackend(t, 200, "text/xml", okResponse)
	cfg := config.Default()
	p := config.DefaultPolicy()
	p.Trust.CAFiles = []string{k.caFile}
	cfg.Policies = map[string]config.Policy{"partner": p}
	cfg.Routes = []config.Route{
		{Name: "orders", Path: "/orders", Backend: backend.URL, Policy: "partner"},
		{Name: "open", Path: "/open", Backend: backend.URL, Policy: "none"},
	}
	cfg.ApplyDefaults()
	require.NoError(t, cfg.Validate())
	var logs logBuffer
	gw, err := New(&cfg, metrics.New(metrics.BuildInfo{Version: "test"}), slog.New(slog.NewJSONHandler(&logs, nil)))
	require.NoError(t, err)
	t.Cleanup(gw.Close)
	srv := httptest.NewServer(gw)
	t.Cleanup(srv.Close)

	sum := sha256.Sum256(k.partner.Cert.Raw)
	thumb := hex.EncodeToString(sum[:])

	// Accepted: the first message of its shape goes to the DOM engine (and
	// teaches a template); a later one of the same shape matches it.
	req := signedRequest(t, k)
	resp := post(t, srv.URL, req)
	_, _ = io.Copy(io.Discard, resp.Body)
	require.Equal(t, 200, resp.StatusCode)
	lines := logs.requests(t)
	require.Len(t, lines, 1)
	first := lines[0]
	assert.Equal(t, "INFO", first["level"])
	assert.Equal(t, "ok", first["outcome"])
	assert.Equal(t, "partner", first["policy"])
	assert.Equal(t, "dom", first["engine"])
	assert.Contains(t, first["signer"], "CN=partner")
	assert.Equal(t, thumb, first["signer_sha256"])
	assert.NotContains(t, first, "reason")

	engine := ""
	for deadline := time.Now().Add(5 * time.Second); engine != "template" && time.Now().Before(deadline); {
		resp := post(t, srv.URL, signedRequest(t, k))
		_, _ = io.Copy(io.Discard, resp.Body)
		require.Equal(t, 200, resp.StatusCode)
		lines := logs.requests(t)
		last := lines[len(lines)-1]
		engine, _ = last["engine"].(string)
		assert.Equal(t, thumb, last["signer_sha256"])
		if engine != "template" {
			time.Sleep(20 * time.Millisecond)
		}
	}
	assert.Equal(t, "template", engine, "a message of a learned shape is logged as the template engine's")

	// Rejected: the signature no longer matches the body. The reason is
	// the WS-Security reason; no signer is named for a rejected message.
	bad := bytes.Replace(req, []byte(`<m:GetFiles xmlns:m="urn:example:files"/>`), []byte(`<m:GetFiles xmlns:m="urn:example:files">x</m:GetFiles>`), 1)
	require.NotEqual(t, req, bad)
	resp = post(t, srv.URL, bad)
	_, _ = io.Copy(io.Discard, resp.Body)
	require.Equal(t, 500, resp.StatusCode)
	lines = logs.requests(t)
	rej := lines[len(lines)-1]
	assert.Equal(t, "WARN", rej["level"])
	assert.Equal(t, "security_rejected", rej["outcome"])
	assert.Equal(t, "partner", rej["policy"])
	assert.Contains(t, []any{"dom", "template"}, rej["engine"])
	assert.NotEmpty(t, rej["reason"])
	assert.NotContains(t, rej, "signer")
	assert.NotContains(t, rej, "signer_sha256")

	// A policy-none route: the policy is named, no engine ran.
	resp, err = srv.Client().Post(srv.URL+"/open", "text/xml; charset=utf-8", bytes.NewReader(req))
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	lines = logs.requests(t)
	open := lines[len(lines)-1]
	assert.Equal(t, "none", open["policy"])
	assert.NotContains(t, open, "engine")
	assert.NotContains(t, open, "signer")

	// Message bodies are never logged.
	assert.NotContains(t, logs.String(), "urn:example:files")
	assert.NotContains(t, logs.String(), "SignatureValue")
}
