package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/wssgw/wssgw/internal/config"
)

const mtomPath = "/upload"

// backend discards request bodies and counts their bytes.
type backend struct {
	*http.Server
	url      string
	received atomic.Int64
}

func startBackend() (*backend, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	b := &backend{url: "http://" + ln.Addr().String()}
	b.Server = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		b.received.Add(n)
		w.Header().Set("Content-Type", "text/xml")
		_, _ = w.Write([]byte(`<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body/></soapenv:Envelope>`))
	})}
	go func() { _ = b.Serve(ln) }()
	return b, nil
}

// wssgw is the running binary.
type wssgw struct {
	cmd  *exec.Cmd
	dir  string
	data string
}

// startWssgw runs bin with one secured route (signature and timestamp by
// the demo partner) whose body and MIME limits admit a size-byte
// attachment; the spool directory is the run's temporary directory.
func startWssgw(bin, backend, caFile string, size int64) (*wssgw, error) {
	dir, err := os.MkdirTemp("", "bench-mtom-")
	if err != nil {
		return nil, err
	}
	total := config.ByteSize(size + 16<<20)
	cfg := fmt.Sprintf(`listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0}
mime: {maxPartSize: %[4]d, maxTotalSize: %[5]d, spoolDir: %[6]q}
routes:
  - {name: upload, path: %[1]s, backend: %[2]q, policy: partner, maxBodyBytes: %[5]d}
policies:
  partner:
    require: [signature, timestamp]
    trust: {caFiles: [%[3]q]}
`, mtomPath, backend, caFile, size, int64(total), dir)
	file := filepath.Join(dir, "wssgw.yaml")
	if err := os.WriteFile(file, []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	g := &wssgw{cmd: exec.Command(bin, "serve", "--config", file), dir: dir}
	if g.data, err = g.start(); err != nil {
		g.stop()
		return nil, err
	}
	return g, nil
}

// start starts the process and waits for its listening log line.
func (g *wssgw) start() (string, error) {
	errPipe, err := g.cmd.StderrPipe()
	if err != nil {
		return "", err
	}
	if err := g.cmd.Start(); err != nil {
		return "", fmt.Errorf("starting %s: %w", g.cmd.Path, err)
	}
	sc := bufio.NewScanner(errPipe)
	var log bytes.Buffer
	for sc.Scan() {
		line := sc.Text()
		log.WriteString(line + "\n")
		if strings.Contains(line, `"msg":"listening"`) {
			go func() { _, _ = io.Copy(io.Discard, errPipe) }()
			return "http://" + jsonField(line, "data"), nil
		}
	}
	return "", fmt.Errorf("wssgw exited before listening:\n%s", log.String())
}

// peakRSS is VmHWM of the process, in bytes.
func (g *wssgw) peakRSS() (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", g.cmd.Process.Pid))
	if err != nil {
		return 0, fmt.Errorf("reading the peak RSS (Linux only): %w", err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", g.cmd.Process.Pid)
}

func (g *wssgw) stop() {
	if g.cmd.Process != nil {
		_ = g.cmd.Process.Kill()
		_ = g.cmd.Wait()
	}
	_ = os.RemoveAll(g.dir)
}

// jsonField is the string value of key in a flat JSON log line.
func jsonField(line, key string) string {
	i := strings.Index(line, `"`+key+`":"`)
	if i < 0 {
		return ""
	}
	v := line[i+len(key)+4:]
	return v[:strings.IndexByte(v, '"')]
}
