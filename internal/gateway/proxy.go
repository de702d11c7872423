package gateway

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"sync"
	"time"

	"github.com/wssgw/wssgw/internal/config"
)

// newProxy builds the reverse proxy of one route. It is an
// httputil.ReverseProxy with Rewrite (never Director: Rewrite strips
// hop-by-hop and X-Forwarded-* headers before our hook runs) and a shared
// buffer pool. Rewrite decides what the backend receives besides the body:
// the path wssgw routed on (and no header overriding it), no protocol
// upgrade, and exactly the verified identity headers.
func newProxy(rc config.Route, pool *bufferPool, reserved reservedHeaders) (*httputil.ReverseProxy, error) {
	target, err := url.Parse(rc.Backend)
	if err != nil {
		return nil, fmt.Errorf("gateway: route %s: backend: %w", rc.Name, err)
	}
	transport, err := newTransport(rc, target)
	if err != nil {
		return nil, fmt.Errorf("gateway: route %s: %w", rc.Name, err)
	}
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			// The routed path, decoded (checkPath), re-encoded canonically:
			// never the client's spelling of it.
			pr.Out.URL.RawPath = ""
			// The query as the client sent it: ReverseProxy re-encodes one
			// with ; or a bad escape (dropping and reordering parameters),
			// a guard for proxies that act on the query, which wssgw does
			// not.
			pr.Out.URL.RawQuery = pr.In.URL.RawQuery
			pr.SetURL(target)
			if !rc.IsEgress() {
				// An egress route's backend is a partner outside: it
				// learns nothing of the internal client's address.
				pr.SetXForwarded()
			}
			// SetURL sets the outbound Host to the backend's, which is what
			// a backend behind a sidecar expects; the original is in
			// X-Forwarded-Host.
			dropUpgrade(pr.Out.Header)
			pathOverrides.strip(pr.Out.Header)
			reserved.setIdentity(pr.In, pr.Out.Header)
		},
		// The body idle timeout goes inside, on the response the
		// proxy and the responder read (stall.go).
		Transport:    noSwitchTransport{stallTransport{transport, rc.Timeouts.BackendBodyIdle}},
		BufferPool:   pool,
		ErrorHandler: proxyError,
		// Replaced on routes that sign responses or check a partner's
		// (respond.go, egress.go).
		ModifyResponse: readAhead(pool),
		// ErrorLog is set by New, which has the logger.
	}, nil
}

// backendBufferSize is the write and read buffer of each backend
// connection. With net/http's 4 KiB a forwarded message of a few KiB went
// out in two writes (headers and the first 4 KiB, then the rest) and a
// 4 KiB response came in in two reads; 16 KiB holds most SOAP messages
// whole, for 32 KiB per connection (routes[].maxIdleConns of them at most
// idle, 128 by default) instead of 8 (issue 14).
const backendBufferSize = 16 << 10

// newTransport gives each route its own connection pool, so one slow
// backend cannot take another's idle connections.
func newTransport(rc config.Route, target *url.URL) (*http.Transport, error) {
	t := &http.Transport{
		// A sidecar talks to its backend directly, never through the
		// environment's HTTP proxy.
		Proxy: nil,
		DialContext: (&net.Dialer{
			Timeout:   rc.Timeouts.Connect,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		MaxIdleConnsPerHost:   rc.MaxIdleConns,
		IdleConnTimeout:       rc.Timeouts.Idle,
		ResponseHeaderTimeout: rc.Timeouts.Backend,
		TLSHandshakeTimeout:   rc.Timeouts.Connect,
		ExpectContinueTimeout: time.Second,
		// Bodies pass through byte-exact: the transport must not add
		// Accept-Encoding and transparently decompress.
		DisableCompression: true,
		WriteBufferSize:    backendBufferSize,
		ReadBufferSize:     backendBufferSize,
	}
	if target.Scheme == "https" {
		tc, err := backendTLS(rc.BackendTLS)
		if err != nil {
			return nil, err
		}
		t.TLSClientConfig = tc
		t.ForceAttemptHTTP2 = true
	}
	return t, nil
}

func backendTLS(bt config.BackendTLS) (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: bt.ServerName}
	if bt.CAFile != "" {
		pool, err := loadCAPool(bt.CAFile)
		if err != nil {
			return nil, fmt.Errorf("backendTLS.caFile: %w", err)
		}
		tc.RootCAs = pool
	}
	if bt.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(bt.CertFile, bt.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("backendTLS.certFile: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

func loadCAPool(file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s: no PEM certificates", file)
	}
	return pool, nil
}

// bufferPool recycles the copy buffers of the routes' proxies: 32 KiB for
// most, streamBufferPool's 256 KiB for routes that stream signed
// responses.
type bufferPool struct {
	p sync.Pool // of *[]byte holding a buffer
	// holders recycles the *[]byte of buffers taken out, so that Put,
	// which receives a slice, does not allocate a new one each time.
	holders sync.Pool
	size    int
}

const copyBufferSize = 32 << 10

func newBufferPool() *bufferPool { return newBufferPoolSize(copyBufferSize) }

func newBufferPoolSize(size int) *bufferPool {
	bp := &bufferPool{size: size}
	bp.p.New = func() any { b := make([]byte, size); return &b }
	return bp
}

// streamBufferPool serves the proxies of routes whose responses are signed
// while streamed: ReverseProxy flushes after every write of a body of
// unknown length, so with the signer's 256 KiB pieces a 32 KiB buffer
// would cost eight writes and flushes per piece instead of one.
var streamBufferPool = newBufferPoolSize(256 << 10)

func (b *bufferPool) Get() []byte {
	h := b.p.Get().(*[]byte)
	buf := *h
	*h = nil
	b.holders.Put(h)
	return buf
}

func (b *bufferPool) Put(buf []byte) {
	if cap(buf) != b.size {
		return
	}
	h, _ := b.holders.Get().(*[]byte)
	if h == nil {
		h = new([]byte)
	}
	*h = buf[:b.size]
	b.p.Put(h)
}
