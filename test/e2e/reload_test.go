package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/testpki"
)

// reloadSetup is a TLS gateway whose configuration file a test rewrites:
// two backends answering <a/> and <b/>, a CA, and the listener's
// certificate.
type reloadSetup struct {
	dir, file string
	a, b      *recordingBackend
	ca        *testpki.CA
	caFile    string
	cert      *testpki.Leaf
}

func newReloadSetup(t *testing.T) *reloadSetup {
	dir := t.TempDir()
	ca := testpki.NewCA(t, "reload CA")
	s := &reloadSetup{
		dir: dir, file: filepath.Join(dir, "wssgw.yaml"),
		a: newRecordingBackend(t, []byte("<a/>"), "text/xml"), b: newRecordingBackend(t, []byte("<b/>"), "text/xml"),
		ca: ca, caFile: ca.WriteCert(t, dir), cert: ca.Issue(t, dir, "wssgw.local"),
	}
	return s
}

// config writes the configuration: /orders to backend, the listener's
// certificate from cert, and extra YAML.
func (s *reloadSetup) config(t *testing.T, backend string, cert *testpki.Leaf, extra string) {
	t.Helper()
	y := routeConfig(backend, extra) + fmt.Sprintf("tls: {certFile: %q, keyFile: %q}\n", cert.CertFile, cert.KeyFile)
	writeAtomic(t, s.file, []byte(y))
}

// writeAtomic replaces a file by rename, as careful writers (and the
// kubelet) do.
func writeAtomic(t *testing.T, file string, data []byte) {
	t.Helper()
	tmp := file + ".tmp"
	require.NoError(t, os.WriteFile(tmp, data, 0o600))
	require.NoError(t, os.Rename(tmp, file))
}

func (s *reloadSetup) client(keepAlive bool) *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: s.ca.Pool(), ServerName: "wssgw.local"},
		DisableKeepAlives: !keepAlive,
	}}
}

// call posts to path on a new connection and returns the status, the body
// and the serving certificate.
func (s *reloadSetup) call(t *testing.T, g *gateway, path string) (int, string, *x509.Certificate) {
	t.Helper()
	resp, err := s.client(false).Post(httpsURL(g)+path, "text/xml", strings.NewReader(tinyEnvelope))
	require.NoError(t, err)
	body := readAll(t, resp)
	return resp.StatusCode, string(body), resp.TLS.PeerCertificates[0]
}

func httpsURL(g *gateway) string { return strings.Replace(g.data, "http://", "https://", 1) }

// load posts to /orders continuously from a few clients, on kept-alive
// and on new connections, until stop is called, and counts every request
// that did not end in 200 with one of the backends' answers.
func (s *reloadSetup) load(t *testing.T, g *gateway) (served func() int64, stop func() (ok, failed int64, errs []string)) {
	var okN, failedN atomic.Int64
	var mu sync.Mutex
	var errs []string
	done := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		client := s.client(i%2 == 0)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				resp, err := client.Post(httpsURL(g)+"/orders", "text/xml", strings.NewReader(tinyEnvelope))
				var why string
				if err != nil {
					why = err.Error()
				} else {
					body, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK || (string(body) != "<a/>" && string(body) != "<b/>") {
						why = fmt.Sprintf("%d %s", resp.StatusCode, body)
					}
				}
				if why == "" {
					okN.Add(1)
					continue
				}
				failedN.Add(1)
				mu.Lock()
				errs = append(errs, why)
				mu.Unlock()
			}
		}()
	}
	return okN.Load, func() (int64, int64, []string) {
		close(done)
		wg.Wait()
		return okN.Load(), failedN.Load(), errs
	}
}

// waitLog waits for a log line with msg, beyond the n already there.
func waitLog(t *testing.T, g *gateway, msg string, n int) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if lines := g.logs.find(msg); len(lines) > n {
			return lines[n]
		}
		time.Sleep(20 * time.Millisecond)
	}
	g.logs.mu.Lock()
	defer g.logs.mu.Unlock()
	t.Fatalf("no %q log line (#%d):\n%s", msg, n+1, strings.Join(g.logs.raw, "\n"))
	return nil
}

// TestReloadSIGHUPUnderLoad: under continuous load, SIGHUP reloads a
// configuration that moves a route to another backend, adds a route with
// a WS-Security policy and names a new listener certificate: no request
// fails, and the new route, policy and certificate serve afterwards.
func TestReloadSIGHUPUnderLoad(t *testing.T) {
	s := newReloadSetup(t)
	s.config(t, s.a.URL, s.cert, "")
	g := startGatewayFile(t, s.file, "--reload-interval", "0")
	status, body, cert := s.call(t, g, "/orders")
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, "<a/>", body)
	assert.True(t, cert.Equal(s.cert.Cert))
	status, _, _ = s.call(t, g, "/secured")
	assert.Equal(t, http.StatusNotFound, status)

	served, stop := s.load(t, g)
	atLeast := func(n int64) {
		require.Eventually(t, func() bool { return served() >= n }, 30*time.Second, 10*time.Millisecond)
	}
	atLeast(50)
	renewed := s.ca.Renew(t, t.TempDir(), s.cert)
	s.config(t, s.b.URL, renewed, fmt.Sprintf(`
  - name: secured
    path: /secured
    backend: %s
    policy: partner
policies:
  partner:
    trust: {caFiles: [%q]}
`, s.b.URL, s.caFile))
	require.NoError(t, g.cmd.Process.Signal(syscall.SIGHUP))
	waitLog(t, g, "config reloaded", 0)
	atLeast(served() + 50)    // and on after the swap
	for i := 1; i <= 3; i++ { // more swaps under load: each one drains the last
		require.NoError(t, g.cmd.Process.Signal(syscall.SIGHUP))
		waitLog(t, g, "config reloaded", i)
		atLeast(served() + 20)
	}
	ok, failed, errs := stop()
	assert.Zero(t, failed, "failed requests: %v", errs)
	t.Logf("%d requests during the reload, none failed", ok)

	status, body, cert = s.call(t, g, "/orders")
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "<b/>", body, "the changed route")
	assert.True(t, cert.Equal(renewed.Cert), "the new listener certificate")
	status, body, _ = s.call(t, g, "/secured")
	assert.Equal(t, http.StatusInternalServerError, status, "the added policy refuses an unsigned request")
	assert.Contains(t, body, "InvalidSecurity")
	assert.NotEmpty(t, g.logs.find("reloading configuration"))
	fams := scrape(t, g)
	assert.Equal(t, 4.0, value(t, fams, "wssgw_config_reloads_total", map[string]string{"result": "success"}))
	assert.Equal(t, 0.0, value(t, fams, "wssgw_config_reloads_total", map[string]string{"result": "failure"}))
	assert.Equal(t, 1.0, value(t, fams, "wssgw_config_last_reload_successful", nil))
	assert.Equal(t, float64(renewed.Cert.NotAfter.Unix()),
		value(t, fams, "wssgw_certificate_expiry_timestamp_seconds", map[string]string{"use": "tls"}))
}

// TestReloadBrokenConfigKeepsServing: a configuration that does not
// validate is refused on SIGHUP: the running one keeps serving, /readyz
// stays ready, and the failure shows in the metrics and the log.
func TestReloadBrokenConfigKeepsServing(t *testing.T) {
	s := newReloadSetup(t)
	s.config(t, s.a.URL, s.cert, "")
	g := startGatewayFile(t, s.file, "--reload-interval", "0")
	writeAtomic(t, s.file, []byte(routeConfig(s.b.URL, "")+"timeouts: {backend: 5}\n"))
	require.NoError(t, g.cmd.Process.Signal(syscall.SIGHUP))
	line := waitLog(t, g, "config reload failed; the running configuration stays in use", 0)
	assert.Contains(t, line["error"], "timeouts")

	status, body, _ := s.call(t, g, "/orders")
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "<a/>", body, "the running configuration")
	status, _ = get(t, g.admin+"/readyz")
	assert.Equal(t, http.StatusOK, status)
	fams := scrape(t, g)
	assert.Equal(t, 1.0, value(t, fams, "wssgw_config_reloads_total", map[string]string{"result": "failure"}))
	assert.Equal(t, 0.0, value(t, fams, "wssgw_config_last_reload_successful", nil))
	assert.Nil(t, g.cmd.ProcessState, "SIGHUP must not end the process")
}

// TestReloadFileWatch: without any signal, a changed configuration file
// and a listener certificate renewed in place (cert-manager writing the
// same Secret) are taken up at the next poll.
func TestReloadFileWatch(t *testing.T) {
	s := newReloadSetup(t)
	s.config(t, s.a.URL, s.cert, "")
	g := startGatewayFile(t, s.file, "--reload-interval", "200ms")

	// The certificate renewed in place: same file names.
	renewed := s.ca.Renew(t, t.TempDir(), s.cert)
	for src, dst := range map[string]string{renewed.CertFile: s.cert.CertFile, renewed.KeyFile: s.cert.KeyFile} {
		data, err := os.ReadFile(src)
		require.NoError(t, err)
		writeAtomic(t, dst, data)
	}
	waitLog(t, g, "config reloaded", 0)
	_, _, cert := s.call(t, g, "/orders")
	assert.True(t, cert.Equal(renewed.Cert), "the renewed certificate, without a signal")

	s.config(t, s.b.URL, s.cert, "")
	waitLog(t, g, "config reloaded", 1)
	_, body, _ := s.call(t, g, "/orders")
	assert.Equal(t, "<b/>", body)
	assert.Equal(t, "file changed", waitLog(t, g, "reloading configuration", 1)["trigger"])
}
