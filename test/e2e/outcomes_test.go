package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/signer"
)

// Issue 16: every way a request ends is logged as what it is. These tests
// drive the real binary into each ending and read its JSON request line.

// requestLine waits for the request log line of path and returns the last.
func requestLine(t *testing.T, g *gateway, path string) map[string]any {
	t.Helper()
	var line map[string]any
	require.Eventually(t, func() bool {
		for _, l := range g.logs.find("request") {
			if l["path"] == path {
				line = l
			}
		}
		return line != nil
	}, 10*time.Second, 5*time.Millisecond, "no request log line for %s", path)
	return line
}

// stallingBackend sends its response headers and the first bytes of the
// body, then nothing until the gateway closes the connection. chunked
// means no Content-Length: the gateway relays the first bytes at once.
func stallingBackend(t *testing.T, chunked bool) *httptest.Server {
	t.Helper()
	arrived := make(chan struct{}, 16)
	b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/xml; charset=utf-8")
		if !chunked {
			w.Header().Set("Content-Length", "100000")
		}
		_, _ = io.WriteString(w, `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body>`)
		w.(http.Flusher).Flush()
		arrived <- struct{}{}
		<-r.Context().Done() // the gateway closed the connection
	}))
	t.Cleanup(b.Close)
	return b
}

// postRaw sends a request and reads the whole answer; err is a transport
// error or a body cut short.
func postRaw(g *gateway, path, ctype string, body []byte) (status int, got []byte, err error) {
	resp, err := http.Post(g.data+path, ctype, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	got, err = io.ReadAll(resp.Body)
	return resp.StatusCode, got, err
}

// TestOutcomeDrainCut: requests still running when shutdown.drainTimeout
// ends are drain_cut, not client_canceled: one still waiting for its
// backend gets a 503 fault, a streaming one is cut and logged truncated.
func TestOutcomeDrainCut(t *testing.T) {
	tests := map[string]struct {
		backend func(arrived chan<- struct{}) http.HandlerFunc
		status  int
		cut     bool
	}{
		"fail/waiting for the backend": {backend: func(arrived chan<- struct{}) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				arrived <- struct{}{}
				<-r.Context().Done()
			}
		}, status: http.StatusServiceUnavailable},
		"fail/streaming the response": {backend: func(arrived chan<- struct{}) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "text/xml")
				_, _ = io.WriteString(w, "<first-part/>")
				w.(http.Flusher).Flush()
				arrived <- struct{}{}
				<-r.Context().Done()
			}
		}, status: http.StatusOK, cut: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			arrived := make(chan struct{}, 1)
			backend := httptest.NewServer(tc.backend(arrived))
			t.Cleanup(backend.Close)
			gw := startGateway(t, strings.Replace(routeConfig(backend.URL, ""), "drainTimeout: 10s", "drainTimeout: 300ms", 1))
			type result struct {
				status int
				body   []byte
				err    error
			}
			done := make(chan result, 1)
			go func() {
				s, b, err := postRaw(gw, "/orders", "text/xml", []byte(tinyEnvelope))
				done <- result{s, b, err}
			}()
			<-arrived
			require.NoError(t, gw.cmd.Process.Signal(syscall.SIGTERM))
			r := <-done
			select {
			case err := <-gw.done:
				assert.NoError(t, err, "a cut drain still exits 0")
			case <-time.After(10 * time.Second):
				t.Fatal("wssgw did not exit after the drain timeout")
			}
			assert.Equal(t, tc.status, r.status)
			l := requestLine(t, gw, "/orders")
			assert.Equal(t, metrics.DrainCut.String(), l["outcome"])
			assert.Equal(t, "WARN", l["level"])
			assert.Contains(t, l["error"], "shutdown.drainTimeout")
			assert.Equal(t, float64(tc.status), l["status"])
			if tc.cut {
				assert.Error(t, r.err, "a cut stream must not end cleanly")
				assert.Equal(t, "<first-part/>", string(r.body))
				assert.Equal(t, true, l["truncated"])
				assert.Equal(t, float64(len("<first-part/>")), l["bytes_out"])
			} else {
				require.NoError(t, r.err)
				assert.Contains(t, string(r.body), "Service shutting down")
				assert.NotContains(t, l, "truncated")
			}
		})
	}
}

// TestOutcomeDrainCutUpload: a client still sending its body when the
// drain ends is drain_cut too, and its line is written before the process
// exits, although closing its connection is what ends its handler.
func TestOutcomeDrainCutUpload(t *testing.T) {
	backend := newRecordingBackend(t, []byte("<ok/>"), "text/xml")
	gw := startGateway(t, strings.Replace(routeConfig(backend.URL, ""), "drainTimeout: 10s", "drainTimeout: 300ms", 1))
	u, err := url.Parse(gw.data)
	require.NoError(t, err)
	conn, err := net.Dial("tcp", u.Host)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "POST /orders HTTP/1.1\r\nHost: %s\r\nContent-Type: text/xml\r\nContent-Length: %d\r\n\r\n%s",
		u.Host, len(tinyEnvelope), tinyEnvelope[:20])
	time.Sleep(200 * time.Millisecond) // the gateway is reading the body
	start := time.Now()
	require.NoError(t, gw.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-gw.done:
		assert.NoError(t, err)
		assert.Less(t, time.Since(start), 5*time.Second)
	case <-time.After(10 * time.Second):
		t.Fatal("wssgw did not exit after the drain timeout")
	}
	l := requestLine(t, gw, "/orders")
	assert.Equal(t, metrics.DrainCut.String(), l["outcome"])
	assert.Equal(t, 20.0, l["bytes_in"])
	assert.Zero(t, backend.count())
}

// TestOutcomeAbortedMTOMUpload: a client that sends half of a signed MTOM
// package and closes the connection is client_aborted_upload (it was
// bad_request before issue 16); nothing reaches the backend.
func TestOutcomeAbortedMTOMUpload(t *testing.T) {
	p := newPartnerPKI(t)
	backend := newRecordingBackend(t, []byte(`<ok/>`), "text/xml")
	g := startGateway(t, p.mtomConfig(backend.URL, t.TempDir()))
	data := attachmentData(40 << 10)
	body := mtomPackage([]mtomPart{
		{mtomRootCID, `application/xop+xml; charset=UTF-8; type="text/xml"`, signedXOPRoot(t, p, data, "cid:"+mtomAttCID)},
		{mtomAttCID, "application/octet-stream", data},
	})
	u, err := url.Parse(g.data)
	require.NoError(t, err)
	conn, err := net.Dial("tcp", u.Host)
	require.NoError(t, err)
	fmt.Fprintf(conn, "POST /mtom HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", u.Host, mtomContentType(), len(body))
	half := len(body) / 2
	_, err = conn.Write(body[:half])
	require.NoError(t, err)
	time.Sleep(100 * time.Millisecond)
	require.NoError(t, conn.Close())

	l := requestLine(t, g, "/mtom")
	assert.Equal(t, metrics.ClientAbortedUpload.String(), l["outcome"])
	assert.Equal(t, 499.0, l["status"])
	assert.Equal(t, "signed", l["policy"])
	assert.Equal(t, float64(half), l["bytes_in"])
	assert.Contains(t, l["error"], "unexpected EOF")
	assert.Zero(t, backend.count(), "a truncated package was forwarded")
	fams := scrape(t, g)
	assert.Equal(t, 1.0, value(t, fams, metrics.NameRequests, map[string]string{"route": "mtom", "outcome": "client_aborted_upload"}))
	assert.Equal(t, 0.0, value(t, fams, metrics.NameRequests, map[string]string{"route": "mtom", "outcome": "bad_request"}))
}

// TestOutcomeBackendStalled: a backend that sends its headers and then
// stalls beyond timeouts.backendBodyIdle: a streamed response is cut and
// logged backend_stalled and truncated (not a clean 200), a buffered
// (signed) one gets a 504 fault.
func TestOutcomeBackendStalled(t *testing.T) {
	p := newPartnerPKI(t)
	streamed, buffered := stallingBackend(t, true), stallingBackend(t, false)
	g := startGateway(t, fmt.Sprintf(`
listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0}
shutdown: {drainTimeout: 10s}
routes:
  - {name: streamed, path: /streamed, backend: %[1]s, policy: none, timeouts: {backendBodyIdle: 300ms}}
  - {name: buffered, path: /buffered, backend: %[2]s, policy: signed, timeouts: {backendBodyIdle: 300ms}}
policies:
  signed:
    require: [signature, timestamp]
    trust: {caFiles: [%[3]s]}
    responses: {sign: true, certFile: %[4]s, keyFile: %[5]s}
`, streamed.URL, buffered.URL, p.ca, p.server.CertFile, p.server.KeyFile))

	t.Run("fail/streamed response cut", func(t *testing.T) {
		start := time.Now()
		status, body, err := postRaw(g, "/streamed", "text/xml", []byte(tinyEnvelope))
		assert.Error(t, err, "the client must see a cut, not a clean end")
		assert.Equal(t, http.StatusOK, status, "the headers went out before the stall")
		assert.Contains(t, string(body), "<soapenv:Body>")
		assert.Less(t, time.Since(start), 5*time.Second, "cut after the idle timeout, not the client's")
		l := requestLine(t, g, "/streamed")
		assert.Equal(t, metrics.BackendStalled.String(), l["outcome"])
		assert.Equal(t, "WARN", l["level"])
		assert.Equal(t, true, l["truncated"])
		assert.Equal(t, float64(len(body)), l["bytes_out"])
		assert.Contains(t, l["error"], "timeouts.backendBodyIdle")
	})

	t.Run("fail/buffered response 504", func(t *testing.T) {
		status, body, err := postRaw(g, "/buffered", "text/xml; charset=utf-8", signedEnvelope(t, p))
		require.NoError(t, err)
		assert.Equal(t, http.StatusGatewayTimeout, status, string(body))
		assert.Contains(t, string(body), "Backend service timed out")
		l := requestLine(t, g, "/buffered")
		assert.Equal(t, metrics.BackendStalled.String(), l["outcome"])
		assert.Equal(t, 504.0, l["status"])
		assert.NotContains(t, l, "truncated")
		assert.Contains(t, l["error"], "timeouts.backendBodyIdle")
		assert.Contains(t, l["signer"], "CN=client", "the accepted request's signer is logged even when the backend fails")
	})

	fams := scrape(t, g)
	for _, route := range []string{"streamed", "buffered"} {
		assert.Equal(t, 1.0, value(t, fams, metrics.NameRequests, map[string]string{"route": route, "outcome": "backend_stalled"}), route)
		assert.Equal(t, 0.0, value(t, fams, metrics.NameRequests, map[string]string{"route": route, "outcome": "backend_aborted"}), route)
	}
}

// signedEnvelope is a request signed by the partner's client certificate,
// with a timestamp.
func signedEnvelope(t *testing.T, p *partnerPKI) []byte {
	t.Helper()
	o := signer.DefaultOptions()
	o.Signer, o.Certificate = p.client.Key, p.client.Cert
	env := `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body>` +
		`<m:GetFiles xmlns:m="urn:e2e:files"/></soapenv:Body></soapenv:Envelope>`
	out, err := signer.Secure([]byte(env), o)
	require.NoError(t, err)
	return out
}

// TestRequestLogNamesSigner: the request log line of an accepted signed
// message names the verified signer (subject and SHA-256 thumbprint), the
// policy and the engine; a rejected one names the reason and no signer.
func TestRequestLogNamesSigner(t *testing.T) {
	p := newPartnerPKI(t)
	backend := newRecordingBackend(t, []byte(`<ok/>`), "text/xml")
	g := startGateway(t, fmt.Sprintf(`
listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0}
shutdown: {drainTimeout: 10s}
routes:
  - {name: signed, path: /signed, backend: %s, policy: signed}
  - {name: rejected, path: /rejected, backend: %[1]s, policy: signed}
policies:
  signed:
    require: [signature, timestamp]
    trust: {caFiles: [%s]}
`, backend.URL, p.ca))
	sum := sha256.Sum256(p.client.Cert.Raw)

	status, body, err := postRaw(g, "/signed", "text/xml; charset=utf-8", signedEnvelope(t, p))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status, string(body))
	l := requestLine(t, g, "/signed")
	assert.Equal(t, "ok", l["outcome"])
	assert.Equal(t, "signed", l["policy"])
	assert.Equal(t, "dom", l["engine"])
	assert.Equal(t, "CN=client", l["signer"])
	assert.Equal(t, hex.EncodeToString(sum[:]), l["signer_sha256"])
	assert.NotContains(t, l, "reason")

	tampered := bytes.Replace(signedEnvelope(t, p), []byte(`<m:GetFiles xmlns:m="urn:e2e:files"/>`), []byte(`<m:GetFiles xmlns:m="urn:e2e:files">all</m:GetFiles>`), 1)
	status, _, err = postRaw(g, "/rejected", "text/xml; charset=utf-8", tampered)
	require.NoError(t, err)
	assert.Equal(t, http.StatusInternalServerError, status)
	l = requestLine(t, g, "/rejected")
	assert.Equal(t, "security_rejected", l["outcome"])
	assert.Equal(t, "signed", l["policy"])
	assert.NotEmpty(t, l["reason"])
	assert.NotEmpty(t, l["error"])
	assert.NotContains(t, l, "signer")
}
