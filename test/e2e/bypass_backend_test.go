package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/testpath"
)

// bypassRecord is one request a bypassBackend received.
type bypassRecord struct {
	Method string
	// Target is the request-target as received; Path is the path a Tomcat
	// with a lenient connector routes it to (testpath.Tomcat).
	Target, Path string
	Header       http.Header
	Body         []byte
}

// bypassBackend is the backend an attacker hopes to reach: a real HTTP
// server on loopback that records everything it receives, routes by the
// path it normalizes like Tomcat, and switches protocols whenever asked
// (it answers 101 to any Upgrade and records every later byte on the
// socket as tunnelled). Issue 13 items 1 and 2 are about what such a
// backend does with what a gateway lets through. A path ending in /switch
// gets a 101 even without an Upgrade header.
type bypassBackend struct {
	URL string
	srv *http.Server

	mu        sync.Mutex
	records   []bypassRecord
	tunnelled []byte
	active    int // handlers running (an upgraded one reads until idle)
	conns     []net.Conn
}

// bypassResponse is the backend's answer to every plain request.
const bypassResponse = `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><ok xmlns="urn:e2e"/></soapenv:Body></soapenv:Envelope>`

func newBypassBackend(t *testing.T) *bypassBackend {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	b := &bypassBackend{URL: "http://" + ln.Addr().String()}
	b.srv = &http.Server{Handler: b, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = b.srv.Serve(ln) }()
	t.Cleanup(func() {
		_ = b.srv.Close()
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, c := range b.conns { // hijacked: Close does not know them
			_ = c.Close()
		}
	})
	return b
}

func (b *bypassBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	b.active++
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		b.active--
		b.mu.Unlock()
	}()
	body, _ := io.ReadAll(r.Body)
	b.mu.Lock()
	b.records = append(b.records, bypassRecord{Method: r.Method, Target: r.RequestURI, Path: testpath.Tomcat(r.RequestURI),
		Header: r.Header.Clone(), Body: body})
	b.mu.Unlock()
	if up := r.Header.Get("Upgrade"); up != "" {
		b.upgrade(w, up)
		return
	}
	if strings.HasSuffix(r.URL.Path, "/switch") {
		// A backend that switches protocols unasked.
		b.upgrade(w, "h2c")
		return
	}
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	_, _ = io.WriteString(w, bypassResponse)
}

// upgrade switches protocols as a naive backend does (RFC 9110 §7.8) and
// records whatever then arrives on the connection until it is idle for a
// second.
func (b *bypassBackend) upgrade(w http.ResponseWriter, proto string) {
	conn, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	b.mu.Lock()
	b.conns = append(b.conns, conn)
	b.mu.Unlock()
	defer conn.Close()
	fmt.Fprintf(rw, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: %s\r\n\r\n", proto)
	if rw.Flush() != nil {
		return
	}
	buf := make([]byte, 4096)
	for {
		_ = conn.SetReadDeadline(time.Now().Add(time.Second))
		n, err := rw.Read(buf)
		if n > 0 {
			b.mu.Lock()
			b.tunnelled = append(b.tunnelled, buf[:n]...)
			b.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

// count is the number of requests received.
func (b *bypassBackend) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.records)
}

// since returns the records from index n on.
func (b *bypassBackend) since(n int) []bypassRecord {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]bypassRecord(nil), b.records[n:]...)
}

func (b *bypassBackend) last() bypassRecord {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.records[len(b.records)-1]
}

// tunnel returns the bytes received on upgraded connections.
func (b *bypassBackend) tunnel() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]byte(nil), b.tunnelled...)
}

// settle waits until no handler runs (an upgraded connection is read
// until idle), so that what was tunnelled is recorded.
func (b *bypassBackend) settle(t *testing.T) {
	t.Helper()
	require.Eventually(t, func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.active == 0
	}, 10*time.Second, 10*time.Millisecond)
}

// underOrders reports whether a normalized path is the secured /orders
// service (not its policy-none /orders/wsdl sibling).
func underOrders(p string) bool {
	if p == "/orders/wsdl" || strings.HasPrefix(p, "/orders/wsdl/") {
		return false
	}
	return p == "/orders" || strings.HasPrefix(p, "/orders/")
}

// rawRequest is an HTTP/1.1 request written byte for byte: Go's client
// would clean the request-target and refuse some header names.
type rawRequest struct {
	method, target string
	header         []string // "Name: value" lines, in order
	contentType    string
	body           []byte
}

func (r rawRequest) bytes() []byte {
	var b bytes.Buffer
	method := r.method
	if method == "" {
		method = http.MethodPost
	}
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: wssgw.test\r\n", method, r.target)
	if r.contentType != "" {
		fmt.Fprintf(&b, "Content-Type: %s\r\n", r.contentType)
	}
	fmt.Fprintf(&b, "Content-Length: %d\r\n", len(r.body))
	for _, h := range r.header {
		b.WriteString(h + "\r\n")
	}
	b.WriteString("\r\n")
	b.Write(r.body)
	return b.Bytes()
}

// rawResponse is a response read off a raw connection.
type rawResponse struct {
	status int
	header http.Header
	body   []byte
}

// roundTrip sends r on a new connection to the gateway's data listener
// and reads one response. The connection is returned for tests that go on
// writing to it.
func roundTrip(t *testing.T, g *gateway, r rawRequest) (rawResponse, net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(g.data, "http://"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	require.NoError(t, conn.SetDeadline(time.Now().Add(30*time.Second)))
	_, err = conn.Write(r.bytes())
	require.NoError(t, err)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, &http.Request{Method: r.method})
	require.NoError(t, err, "reading the gateway's response to %s %s", r.method, r.target)
	var body []byte
	if resp.StatusCode != http.StatusSwitchingProtocols {
		body, err = io.ReadAll(resp.Body)
		require.NoError(t, err)
	}
	return rawResponse{status: resp.StatusCode, header: resp.Header, body: body}, conn, br
}

// send is roundTrip with Connection: close.
func send(t *testing.T, g *gateway, r rawRequest) rawResponse {
	t.Helper()
	r.header = append([]string{"Connection: close"}, r.header...)
	resp, conn, _ := roundTrip(t, g, r)
	_ = conn.Close()
	return resp
}

func (r rawResponse) asResponse() *http.Response {
	return &http.Response{StatusCode: r.status, Header: r.header, Body: io.NopCloser(bytes.NewReader(r.body))}
}
