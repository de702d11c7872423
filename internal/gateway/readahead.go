package gateway

import (
	"io"
	"net/http"
	"strconv"
	"strings"
)

// readAhead is the ModifyResponse of a route that relays its backend's
// responses unchanged. A response of unknown length (chunked, as most
// servlet containers and net/http send anything over a few KiB) is read
// ahead into one pooled copy buffer: when it ends there, it is relayed
// with a Content-Length instead of chunked. httputil.ReverseProxy flushes
// a response of unknown length after every write, from a timer goroutine
// too, so each such response cost the client connection three writes and
// a chunked framing; a response of known length costs one or two (issue
// 14: the signed mix end to end, where every backend answer was chunked).
// A SOAP response is one document the client reads whole, so holding up
// to one buffer of it before the headers go out delays nothing the client
// could use, as nginx's default proxy_buffering does.
//
// A response that does not end within the buffer streams on as before,
// the buffer first; a read error (a stall: the reads go through the body
// idle timer, stall.go) is kept for after the buffered bytes, so the proxy
// sees it where it would have, and aborts the same way. Routes that sign
// their responses or check a partner's (egress) read them themselves and
// replace this hook.
func readAhead(pool *bufferPool) func(*http.Response) error {
	return func(resp *http.Response) error {
		if !readAheadable(resp) {
			return nil
		}
		buf := pool.Get()
		n, err := readFull(resp.Body, buf)
		switch {
		case err == io.EOF && len(resp.Trailer) == 0:
			// The whole body, and no trailer that needs chunked
			// framing to reach the client: Content-Length.
			_ = resp.Body.Close()
			resp.Body = &bufferedBody{data: buf[:n], buf: buf, pool: pool}
			resp.ContentLength = int64(n)
			resp.Header["Content-Length"] = []string{strconv.Itoa(n)}
		case err == io.EOF:
			resp.Body = &bufferedBody{data: buf[:n], buf: buf, pool: pool, rest: resp.Body}
		default:
			// Full, or a read error to be met after the prefix.
			resp.Body = &bufferedBody{data: buf[:n], buf: buf, pool: pool, rest: resp.Body, err: err}
		}
		return nil
	}
}

// readAheadable reports whether resp's body may be read ahead: its length
// is unknown, it has a body, no trailers are announced (they need chunked
// framing), and it is not an event stream (which the proxy flushes event by
// event).
func readAheadable(resp *http.Response) bool {
	switch {
	case resp.ContentLength != -1, resp.Body == nil, resp.Body == http.NoBody, len(resp.Trailer) > 0:
		return false
	case resp.StatusCode < 200, resp.StatusCode == http.StatusNoContent, resp.StatusCode == http.StatusNotModified:
		return false
	case resp.Request != nil && resp.Request.Method == http.MethodHead:
		return false
	}
	base, _, _ := strings.Cut(resp.Header.Get("Content-Type"), ";")
	return !strings.EqualFold(strings.TrimSpace(base), "text/event-stream")
}

// readFull reads from r into buf until buf is full (nil error), r ends
// (io.EOF) or a read fails (that error).
func readFull(r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// bufferedBody is a response body read ahead: data, then rest when the
// body did not end in the buffer (or err, the read error met there).
// Close returns the buffer to its pool.
type bufferedBody struct {
	data []byte
	buf  []byte
	pool *bufferPool
	rest io.ReadCloser // nil when data is the whole body
	err  error         // met reading ahead, returned after data
}

func (b *bufferedBody) Read(p []byte) (int, error) {
	if len(b.data) > 0 {
		n := copy(p, b.data)
		b.data = b.data[n:]
		return n, nil
	}
	switch {
	case b.err != nil:
		return 0, b.err
	case b.rest != nil:
		return b.rest.Read(p)
	}
	return 0, io.EOF
}

func (b *bufferedBody) Close() error {
	var err error
	if b.rest != nil {
		err = b.rest.Close()
	}
	if b.buf != nil {
		b.data = nil
		b.pool.Put(b.buf)
		b.buf = nil
	}
	return err
}
