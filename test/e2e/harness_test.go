package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// binary is the wssgw binary built once for all tests.
var binary string

// buildVersion is stamped into the binary to check that version info comes
// from the build.
const buildVersion = "v0.0.0-e2e"

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "wssgw-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "wssgw")
	args := []string{"build", "-o", binary, "-ldflags", "-X main.version=" + buildVersion + " -X main.commit=e2ecommit"}
	if raceEnabled {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, "github.com/wssgw/wssgw/cmd/wssgw")...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building wssgw:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// gateway is a running wssgw process.
type gateway struct {
	t     *testing.T
	cmd   *exec.Cmd
	data  string // base URL of the data listener
	admin string // base URL of the admin listener
	logs  *logSink
	done  chan error
}

// logSink keeps the process's JSON log lines.
type logSink struct {
	mu    sync.Mutex
	lines []map[string]any
	raw   []string
}

func (s *logSink) add(line string) map[string]any {
	var m map[string]any
	_ = json.Unmarshal([]byte(line), &m)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.raw = append(s.raw, line)
	s.lines = append(s.lines, m)
	return m
}

// find returns the log lines whose msg is msg.
func (s *logSink) find(msg string) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, l := range s.lines {
		if l != nil && l["msg"] == msg {
			out = append(out, l)
		}
	}
	return out
}

// startGateway writes config (a YAML document whose listen addresses are
// replaced by loopback port 0) and runs `wssgw serve` on it, waiting until
// both listeners are up.
func startGateway(t *testing.T, config string) *gateway {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "wssgw.yaml")
	require.NoError(t, os.WriteFile(file, []byte(config), 0o600))
	return startGatewayFile(t, file)
}

// startGatewayFile runs `wssgw serve` on the configuration file, with
// extra flags, and waits until both listeners are up.
func startGatewayFile(t *testing.T, file string, flags ...string) *gateway {
	t.Helper()
	args := append([]string{"serve", "--config", file, "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"}, flags...)
	cmd := exec.Command(binary, args...)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	g := &gateway{t: t, cmd: cmd, logs: &logSink{}, done: make(chan error, 1)}
	listening := make(chan map[string]any, 1)
	go g.readLogs(stderr, listening)
	go func() { g.done <- cmd.Wait() }()
	select {
	case l := <-listening:
		g.data, g.admin = "http://"+l["data"].(string), "http://"+l["admin"].(string)
	case err := <-g.done:
		t.Fatalf("wssgw exited before listening: %v\n%s", err, strings.Join(g.logs.raw, "\n"))
	case <-time.After(30 * time.Second):
		t.Fatal("wssgw did not start listening within 30s")
	}
	t.Cleanup(g.stop)
	return g
}

func (g *gateway) readLogs(r io.Reader, listening chan<- map[string]any) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if m := g.logs.add(sc.Text()); m != nil && m["msg"] == "listening" {
			listening <- m
		}
	}
}

// stop kills the process if a test left it running.
func (g *gateway) stop() {
	if g.cmd.ProcessState == nil {
		_ = g.cmd.Process.Kill()
		<-g.done
	}
}

// post sends a SOAP request through the gateway.
func (g *gateway) post(path, contentType string, body io.Reader) *http.Response {
	g.t.Helper()
	req, err := http.NewRequest(http.MethodPost, g.data+path, body)
	require.NoError(g.t, err)
	req.Header.Set("Content-Type", contentType)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(g.t, err)
	return resp
}

func readAll(t *testing.T, resp *http.Response) []byte {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return b
}

// routeConfig is a minimal configuration with one route to backend.
func routeConfig(backend string, extra string) string {
	return fmt.Sprintf(`
listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0}
shutdown: {drainTimeout: 10s}
routes:
  - name: orders
    path: /orders
    backend: %s
    policy: none
%s`, backend, extra)
}
