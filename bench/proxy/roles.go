package main

import (
	"bufio"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/wssgw/wssgw/bench/proc"
	wcrypto "github.com/wssgw/wssgw/internal/crypto"
)

// serveRole runs this binary as the backend or the plain proxy:
// "serve backend" or "serve plain BACKEND_ADDR". It prints its address on
// stdout and serves until killed.
func serveRole(args []string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var h http.Handler
	switch args[0] {
	case "backend":
		h = backendHandler(soapBody(4096))
	case "plain":
		h = plainProxy(args[1])
	}
	fmt.Println(ln.Addr().String())
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	_ = srv.Serve(ln)
}

// backendHandler reads the request and answers with a fixed SOAP response.
func backendHandler(response []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/xml; charset=utf-8")
		_, _ = w.Write(response)
	})
}

// plainProxy is the baseline: the standard library's reverse proxy with a
// transport pooled like wssgw's, so the comparison is of the gateways, not
// of connection reuse.
func plainProxy(backend string) http.Handler {
	target := &url.URL{Scheme: "http", Host: backend}
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.SetXForwarded()
		},
		Transport: &http.Transport{MaxIdleConnsPerHost: 128, IdleConnTimeout: 90 * time.Second, DisableCompression: true},
		// Quiet like wssgw: the load generator's closing connections at the
		// end of a round are not news.
		ErrorLog: log.New(io.Discard, "", 0),
	}
}

// processes are the child processes of a benchmark run.
type processes struct {
	cmds  []*exec.Cmd // the roles
	gws   []*proc.Wssgw
	pprof bool // mount wssgw's /debug/pprof for -profile
}

func (p *processes) startRole(role, backend string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	args := []string{"serve", role}
	if backend != "" {
		args = append(args, backend)
	}
	cmd := exec.Command(self, args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	p.cmds = append(p.cmds, cmd)
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("%s did not start: %w", role, err)
	}
	return strings.TrimSpace(line), nil
}

// wssgwConfig is what the benchmark's wssgw configuration names: the
// demo CA and partner certificate, the new partners' key pairs (their
// certificates are pinned in the mix policy), and the memory settings the
// flags override (empty: wssgw's defaults).
type wssgwConfig struct {
	caFile, partnerCert       string
	partnerKeys               []*wcrypto.KeyPair
	domShare, firstSightShare string
}

// startWssgw runs the real binary with an unsecured route, a signed one
// with replay off (the repeated message), the mix route and the new
// partners' route (fresh.go; the mix's policy, so its templates) to backend, and
// returns its data and admin addresses. It logs at info level, as in
// production, into a discarded pipe. The new partners' certificates are
// written into wssgw's own temporary directory, beside its configuration.
// The shares, when set, override server.memory.domShare and
// server.memory.firstSightShare through the environment, as an operator
// would.
func (p *processes) startWssgw(bin, backend string, c wssgwConfig) (data, admin string, err error) {
	var certErr error
	config := func(dir string) string {
		files, err := writeCerts(dir, c.partnerKeys)
		certErr = err
		return fmt.Sprintf("listen: 127.0.0.1:0\nadmin: {listen: 127.0.0.1:0, pprof: %t}\nroutes:\n"+
			"  - {name: orders, path: /orders, backend: \"http://%s\", policy: none}\n"+
			"  - {name: signed, path: %s, backend: \"http://%s\", policy: partner}\n"+
			"  - {name: mix, path: %s, backend: \"http://%s\", policy: mix}\n"+
			"  - {name: partner, path: %s, backend: \"http://%s\", policy: mix}\n"+signedPolicy+mixPolicy,
			p.pprof, backend, signedPath, backend, mixPath, backend, partnerPath, backend, c.caFile, c.caFile, c.partnerCert, yamlList(files))
	}
	var env []string
	if c.domShare != "" {
		env = append(env, "WSSGW_SERVER_MEMORY_DOMSHARE="+c.domShare)
	}
	if c.firstSightShare != "" {
		env = append(env, "WSSGW_SERVER_MEMORY_FIRSTSIGHTSHARE="+c.firstSightShare)
	}
	g, err := proc.Start(bin, "bench-proxy-", env, config)
	if certErr != nil {
		if err == nil {
			g.Stop()
		}
		return "", "", fmt.Errorf("writing the new partners' certificates: %w", certErr)
	}
	if err != nil {
		return "", "", err
	}
	p.gws = append(p.gws, g)
	// The scenarios take host:port addresses.
	return strings.TrimPrefix(g.Data, "http://"), strings.TrimPrefix(g.Admin, "http://"), nil
}

// lastPID is the process id of the role started last.
func (p *processes) lastPID() int { return p.cmds[len(p.cmds)-1].Process.Pid }

// wssgwPID is the process id of the wssgw started last (lastPID is a
// role's: the plain proxy's once wssgw started after it).
func (p *processes) wssgwPID() int { return p.gws[len(p.gws)-1].Cmd.Process.Pid }

func (p *processes) stopAll() {
	for _, c := range p.cmds {
		_ = c.Process.Kill()
		_ = c.Wait()
	}
	for _, g := range p.gws {
		g.Stop()
	}
}

// yamlList is files as a YAML flow sequence of quoted strings.
func yamlList(files []string) string {
	q := make([]string, len(files))
	for i, f := range files {
		q[i] = strconv.Quote(f)
	}
	return "[" + strings.Join(q, ", ") + "]"
}
