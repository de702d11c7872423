package e2e

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/testpki"
)

func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().String()
}

// TestDemo runs what `make run` runs and sends the example requests it
// suggests.
func TestDemo(t *testing.T) {
	file := filepath.Join(t.TempDir(), "demo.yaml")
	require.NoError(t, os.WriteFile(file, []byte(routeConfig("http://"+freePort(t), "")), 0o600))
	cmd := exec.Command(binary, "demo", "--config", file, "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0")
	cmd.Dir = "../.."
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	var url string
	sc := bufio.NewScanner(stdout)
	deadline := time.Now().Add(30 * time.Second)
	for url == "" && time.Now().Before(deadline) && sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 3 && f[0] == "--data-binary" {
			url = f[2]
		}
	}
	require.NotEmpty(t, url, "demo printed no request command")
	for _, ex := range []struct{ file, ct, ns string }{
		{"orders-soap11.xml", "text/xml; charset=utf-8", "http://schemas.xmlsoap.org/soap/envelope/"},
		{"orders-soap12.xml", "application/soap+xml; charset=utf-8", "http://www.w3.org/2003/05/soap-envelope"},
	} {
		body, err := os.Open(filepath.Join("../../examples", ex.file))
		require.NoError(t, err)
		resp, err := http.Post(url, ex.ct, body)
		require.NoError(t, err)
		got := string(readAll(t, resp))
		assert.Equal(t, http.StatusOK, resp.StatusCode, got)
		assert.Contains(t, got, "PlaceOrderResponse")
		assert.Contains(t, got, ex.ns)
	}
}

// TestDataListenerTLSWithClientCertificates: TLS termination with required
// client certificates on the data listener.
func TestDataListenerTLSWithClientCertificates(t *testing.T) {
	dir := t.TempDir()
	ca := testpki.NewCA(t, "partners")
	server, partner := ca.Issue(t, dir, "wssgw.local"), ca.Issue(t, dir, "partner-a")
	other := testpki.NewCA(t, "other").Issue(t, dir, "stranger")
	backend := newRecordingBackend(t, []byte("<ok/>"), "text/xml")
	gw := startGateway(t, routeConfig(backend.URL, "")+fmt.Sprintf(
		"tls: {certFile: %q, keyFile: %q, clientCAFile: %q, clientAuth: require}\n", server.CertFile, server.KeyFile, ca.WriteCert(t, dir)))
	url := strings.Replace(gw.data, "http://", "https://", 1) + "/orders"

	client := func(certs ...tls.Certificate) *http.Client {
		return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool(), Certificates: certs}}}
	}
	resp, err := client(partner.TLS(t)).Post(url, "text/xml", strings.NewReader(tinyEnvelope))
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	readAll(t, resp)
	_, hdr := backend.last()
	assert.Equal(t, "https", hdr.Get("X-Forwarded-Proto"))

	for name, c := range map[string]*http.Client{"no-cert": client(), "untrusted-cert": client(other.TLS(t))} {
		_, err := c.Post(url, "text/xml", strings.NewReader(tinyEnvelope))
		assert.Error(t, err, name)
	}
	assert.Equal(t, 1, backend.count())
}

// TestDemoSecuredWalkthrough: make run's configuration shows a signed and
// encrypted request accepted and a tampered one rejected.
func TestDemoSecuredWalkthrough(t *testing.T) {
	cmd := exec.Command(binary, "demo", "--config", "config.example.yaml", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0")
	cmd.Dir = "../.."
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := map[string]string{}
	sc := bufio.NewScanner(stdout)
	for len(lines) < 2 && sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) >= 4 && f[1] == "->" {
			lines[f[0]] = strings.Join(f[2:], " ")
		}
	}
	require.Len(t, lines, 2, "demo printed no walkthrough")
	assert.Contains(t, lines["secured.xml"], "HTTP 200 accepted")
	assert.Contains(t, lines["tampered.xml"], "HTTP 500 fault: An error was discovered processing the")
}
