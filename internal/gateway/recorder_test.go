package gateway

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// recorder is a backend that records what reaches it: the raw
// request-target and the headers of every request.
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	got  []recorded
	body []byte // the answer
}

type recorded struct {
	target      string
	header      http.Header
	body        string
	contentType string
}

func newRecorder(t *testing.T) *recorder {
	t.Helper()
	rec := &recorder{body: []byte(testEnvelope)}
	rec.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.got = append(rec.got, recorded{target: r.RequestURI, header: r.Header.Clone(), body: string(b), contentType: r.Header.Get("Content-Type")})
		rec.mu.Unlock()
		w.Header().Set("Content-Type", "text/xml; charset=utf-8")
		_, _ = w.Write(rec.body)
	}))
	t.Cleanup(rec.Close)
	return rec
}

func (rec *recorder) requests() []recorded {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]recorded(nil), rec.got...)
}

// bodies are the request bodies received, in order.
func (rec *recorder) bodies() []string {
	var out []string
	for _, r := range rec.requests() {
		out = append(out, r.body)
	}
	return out
}

func (rec *recorder) last(t *testing.T) recorded {
	t.Helper()
	got := rec.requests()
	require.NotEmpty(t, got, "nothing reached the backend")
	return got[len(got)-1]
}

// rawPost sends a request exactly as written (request-target and header
// lines are not normalized by a client library) and reads the answer.
func rawPost(t *testing.T, addr, target string, headers []string, body []byte) (*http.Response, []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	var req bytes.Buffer
	fmt.Fprintf(&req, "POST %s HTTP/1.1\r\nHost: gw\r\nContent-Length: %d\r\n", target, len(body))
	if !hasHeader(headers, "Content-Type") {
		req.WriteString("Content-Type: text/xml; charset=utf-8\r\n")
	}
	for _, h := range headers {
		req.WriteString(h + "\r\n")
	}
	req.WriteString("\r\n")
	req.Write(body)
	_, err = conn.Write(req.Bytes())
	require.NoError(t, err)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	for err == nil && resp.StatusCode >= 100 && resp.StatusCode < 200 && resp.StatusCode != http.StatusSwitchingProtocols {
		resp, err = http.ReadResponse(br, nil) // informational: the answer follows
	}
	require.NoError(t, err)
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, out
}

func hasHeader(headers []string, name string) bool {
	for _, h := range headers {
		if n, _, ok := strings.Cut(h, ":"); ok && strings.EqualFold(n, name) {
			return true
		}
	}
	return false
}
