package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/wssgw/wssgw/bench/proc"
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

// launchWssgw runs bin with one signed route to backend and waits until it
// listens. Replay is off because the load repeats the same messages. The
// first-sight lanes are off: a tampered message whose valid twin was never
// accepted is a first sight and most would be shed before the DOM engine,
// while one whose twin was (the Body is not part of a shape) takes no
// lane; the memory budget alone must bound both, so it is what is
// measured.
func launchWssgw(o options, backend, caFile string) (*proc.Wssgw, error) {
	budget := ""
	if o.budget != "" {
		budget = ", inflightBytes: " + o.budget
	}
	memory := "server: {memory: {firstSightShare: 0" + budget + "}}\n"
	if !o.templates {
		memory += "templates: {enabled: false}\n"
	}
	cfg := fmt.Sprintf("listen: 127.0.0.1:0\nadmin: {listen: 127.0.0.1:0}\n%sroutes:\n"+
		"  - {name: signed, path: /signed, backend: \"http://%s\", policy: partner}\n"+
		"policies:\n  partner:\n    require: [signature, timestamp]\n    trust: {caFiles: [%q]}\n    replay: \"off\"\n",
		memory, backend, caFile)
	var env []string
	if o.goMemLimit != "" {
		env = append(env, "GOMEMLIMIT="+o.goMemLimit)
	}
	return proc.Start(o.wssgw, "bench-memory-", env, func(string) string { return cfg })
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
