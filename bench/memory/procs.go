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
	"time"
)

// serveBackend is the backend role: it reads each request whole and
// answers with a small SOAP response. It prints its address and serves
// until killed.
func serveBackend() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	resp := []byte(`<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><m:Ok xmlns:m="urn:bench"/></soapenv:Body></soapenv:Envelope>`)
	fmt.Println(ln.Addr().String())
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/xml; charset=utf-8")
		_, _ = w.Write(resp)
	})}
	_ = srv.Serve(ln)
}

// startBackend runs this binary as the backend and returns its address.
func startBackend() (*exec.Cmd, string, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, "", err
	}
	cmd := exec.Command(self, "serve", "backend")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, "", fmt.Errorf("backend did not start: %w", err)
	}
	return cmd, strings.TrimSpace(line), nil
}

// wssgw is a running gateway process.
type wssgw struct {
	cmd        *exec.Cmd
	dir        string
	data, admn string
}

// launchWssgw runs bin with one signed route to backend and waits until it
// listens. Replay is off because the load repeats the same messages.
func launchWssgw(o options, backend, caFile string) (*wssgw, error) {
	dir, err := os.MkdirTemp("", "bench-memory-")
	if err != nil {
		return nil, err
	}
	memory := ""
	if o.budget != "" {
		memory = "server: {memory: {inflightBytes: " + o.budget + "}}\n"
	}
	if !o.templates {
		memory += "templates: {enabled: false}\n"
	}
	cfg := fmt.Sprintf("listen: 127.0.0.1:0\nadmin: {listen: 127.0.0.1:0}\n%sroutes:\n"+
		"  - {name: signed, path: /signed, backend: \"http://%s\", policy: partner}\n"+
		"policies:\n  partner:\n    require: [signature, timestamp]\n    trust: {caFiles: [%q]}\n    replay: \"off\"\n",
		memory, backend, caFile)
	file := filepath.Join(dir, "wssgw.yaml")
	if err := os.WriteFile(file, []byte(cfg), 0o600); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	g := &wssgw{cmd: exec.Command(o.wssgw, "serve", "--config", file), dir: dir}
	g.cmd.Env = os.Environ()
	if o.goMemLimit != "" {
		g.cmd.Env = append(g.cmd.Env, "GOMEMLIMIT="+o.goMemLimit)
	}
	if err := g.start(); err != nil {
		g.stop()
		return nil, err
	}
	return g, nil
}

func (g *wssgw) start() error {
	errPipe, err := g.cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := g.cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", g.cmd.Path, err)
	}
	sc := bufio.NewScanner(errPipe)
	var log bytes.Buffer
	for sc.Scan() {
		line := sc.Text()
		log.WriteString(line + "\n")
		if strings.Contains(line, `"msg":"listening"`) {
			go func() { _, _ = io.Copy(io.Discard, errPipe) }()
			g.data, g.admn = "http://"+jsonField(line, "data"), "http://"+jsonField(line, "admin")
			return nil
		}
	}
	return fmt.Errorf("wssgw exited before listening:\n%s", log.String())
}

func (g *wssgw) stop() {
	if g.cmd.Process != nil {
		_ = g.cmd.Process.Kill()
		_ = g.cmd.Wait()
	}
	_ = os.RemoveAll(g.dir)
}

// procStatus is a kB field of /proc/PID/status (VmHWM, VmRSS), in bytes.
func procStatus(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("reading the peak RSS (Linux only): %w", err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
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

// metric is the value of the first series of name whose line contains
// every one of labels, from wssgw's /metrics.
func metric(admin, name string, labels ...string) (float64, error) {
	resp, err := http.Get(admin + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	sum := 0.0
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name) || (len(line) > len(name) && line[len(name)] != '{' && line[len(name)] != ' ') {
			continue
		}
		ok := true
		for _, l := range labels {
			ok = ok && strings.Contains(line, l)
		}
		if ok {
			v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			if err != nil {
				return 0, err
			}
			sum += v
		}
	}
	return sum, sc.Err()
}
