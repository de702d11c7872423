package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/testpeer"
)

// cxfResult is the CXF client's JSON line for one call.
type cxfResult struct {
	ID        string `json:"id"`
	OK        bool   `json:"ok"`
	Exit      int    `json:"exit"`
	Error     string `json:"error"`
	ErrorCode string `json:"errorCode"` // FAULT: a SOAP fault reached the caller; ERROR: anything else
	FaultCode string `json:"faultCode"`
	// What the service (or the backend behind wssgw) received.
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	// The attachment the response carried back.
	DataBytes  int    `json:"dataBytes"`
	DataSHA256 string `json:"dataSha256"`
	// The response as CXF saw it: status, type, the WS-Security actions its
	// WSS4JInInterceptor processed, and the signer's DN.
	HTTPStatus          int      `json:"httpStatus"`
	ResponseContentType string   `json:"responseContentType"`
	Processed           []string `json:"processed"`
	Signer              string   `json:"signer"`
}

// cxfCalls runs calls ("call" argument lists by id) in one CXF JVM, two at
// a time, and returns the results by id. JVM start-up and CXF's first
// proxy cost seconds; every call after that costs milliseconds.
func cxfCalls(t *testing.T, jar string, calls []testpeer.Job) map[string]cxfResult {
	t.Helper()
	cmd := exec.Command("java", "-jar", jar, "client", "--parallel", "2")
	return testpeer.Batch[testpeer.Job, cxfResult](t, cmd, calls)
}

// cxfService is a running CXF service secured by WSS4J interceptors (the
// peer's serve command): the partner behind a wssgw egress route.
type cxfService struct {
	// URL is the first endpoint, http://127.0.0.1:PORT/files; URLs has
	// each by SOAP version ("--soap 1.1,1.2" serves 1.2 under /soap12).
	URL    string
	URLs   map[string]string
	stdin  io.WriteCloser
	done   chan error
	ready  chan map[string]any
	stderr lockedBuffer // exec's copier writes it while the test may read it

	mu      sync.Mutex
	uploads []cxfUpload
}

// cxfUpload is one request that passed the service's WSS4J checks and
// reached its implementation.
type cxfUpload struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// startCXFService starts the peer's CXF service with the serve flags args
// (see interop/cxf/README.md: --key, --cert, --ca required; --actions
// "Timestamp Signature[ Encrypt]" what requests must carry, responses
// secured alike unless --response-actions; --soap 1.1|1.2|1.1,1.2, --mtom,
// --sign-timestamp and the algorithm flags) and returns once it listens.
// It runs until the test ends (its stdin is closed then).
func startCXFService(t *testing.T, jar string, args ...string) *cxfService {
	t.Helper()
	return launchCXFService(t, jar, args...).wait(t)
}

// launchCXFService starts the service without waiting for it to listen,
// so that several JVMs start together; wait returns it once it listens.
func launchCXFService(t *testing.T, jar string, args ...string) *cxfService {
	t.Helper()
	cmd := exec.Command("java", append([]string{"-jar", jar, "serve"}, args...)...)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	s := &cxfService{stdin: stdin, done: make(chan error, 1), ready: make(chan map[string]any, 1)}
	cmd.Stderr = &s.stderr
	require.NoError(t, cmd.Start())
	go s.read(stdout, s.ready)
	go func() { s.done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = stdin.Close()
		select {
		case <-s.done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-s.done
		}
	})
	return s
}

// lockedBuffer is a bytes.Buffer safe for one writer and concurrent readers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// wait returns s once it listens (its URL set), or fails the test.
func (s *cxfService) wait(t *testing.T) *cxfService {
	t.Helper()
	select {
	case m := <-s.ready:
		require.Equal(t, true, m["ok"], "CXF service: %v\n%s", m, s.stderr.String())
		s.URL = m["url"].(string)
		s.URLs = map[string]string{}
		urls, _ := m["urls"].(map[string]any)
		for v, u := range urls {
			s.URLs[v] = u.(string)
		}
	case err := <-s.done:
		t.Fatalf("CXF service exited before listening: %v\n%s", err, s.stderr.String())
	case <-time.After(3 * time.Minute):
		t.Fatalf("CXF service did not start within 3 minutes\n%s", s.stderr.String())
	}
	return s
}

func (s *cxfService) read(r io.Reader, ready chan<- map[string]any) {
	sc := bufio.NewScanner(r)
	first := true
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		if first {
			first = false
			ready <- m
			continue
		}
		var u cxfUpload
		if m["event"] == "upload" && json.Unmarshal(sc.Bytes(), &u) == nil {
			s.mu.Lock()
			s.uploads = append(s.uploads, u)
			s.mu.Unlock()
		}
	}
	if first {
		ready <- map[string]any{"ok": false, "error": "no output"}
	}
}

// served returns the requests the service's implementation received so far.
func (s *cxfService) served() []cxfUpload {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]cxfUpload(nil), s.uploads...)
}

// cxfCallArgs is a CXF client call to url with the partner's key, signing
// with what a partner configures on top of CXF's defaults (RSA-SHA256,
// SHA-256 digests, AES-256-GCM, Body and Timestamp signed), MTOM on,
// HTTP/1.1 (CXF's default conduit offers h2c; see TestCXFClient), plus extra.
func (p *partnerPKI) cxfCallArgs(url, soapVersion, attachment string, extra ...string) []string {
	args := []string{"call", "--url", url, "--soap", soapVersion, "--key", p.client.KeyFile, "--cert", p.client.CertFile,
		"--ca", p.ca, "--encrypt-cert", p.server.CertFile, "--attachment", attachment, "--http-version", "1.1"}
	return append(append(args, cxfStrict...), extra...)
}

// cxfStrict are the flags of a partner that does not keep WSS4J's legacy
// defaults (RSA-SHA1, SHA-1 digests, AES-128-CBC, only the Body signed),
// which wssgw's default policy refuses.
var cxfStrict = []string{"--sign-timestamp",
	"--signature-algorithm", "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
	"--digest-algorithm", "http://www.w3.org/2001/04/xmlenc#sha256",
	"--symmetric-algorithm", "http://www.w3.org/2009/xmlenc11#aes256-gcm"}

// cxfRequire fails unless r is a successful call whose attachment came back
// byte for byte (sha) and whose response CXF verified with the actions want.
func cxfRequire(t *testing.T, r cxfResult, sha string, want ...string) {
	t.Helper()
	require.True(t, r.OK, "CXF: %s (%s, HTTP %d)", r.Error, r.ErrorCode, r.HTTPStatus)
	require.Equal(t, sha, r.SHA256, "what the receiver got")
	require.Equal(t, sha, r.DataSHA256, "the attachment sent back")
	for _, a := range want {
		require.Contains(t, r.Processed, a, "CXF's WSS4JInInterceptor processed %v", r.Processed)
	}
}

// cxfFault fails unless r is a SOAP fault that reached the CXF caller
// with HTTP status.
func cxfFault(t *testing.T, r cxfResult, status int) {
	t.Helper()
	require.False(t, r.OK, "CXF accepted it")
	require.Equal(t, "FAULT", r.ErrorCode, "%s", r.Error)
	require.Equal(t, status, r.HTTPStatus, "%s", r.Error)
	t.Logf("CXF caller got: %s (%s)", r.Error, r.FaultCode)
}

// describeCXF is a one-line summary for messages.
func describeCXF(r cxfResult) string {
	return fmt.Sprintf("ok=%v status=%d %s %s processed=%v", r.OK, r.HTTPStatus, r.ErrorCode, r.Error, r.Processed)
}
