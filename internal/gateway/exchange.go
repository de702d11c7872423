package gateway

import (
	"context"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/wssgw/wssgw/internal/budget"
	"github.com/wssgw/wssgw/internal/limit"
	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/soap"
	"github.com/wssgw/wssgw/internal/trust"
)

// exchange is one request's state. It is the http.ResponseWriter the proxy
// writes to, so that the proxy's error hook can reach the request's SOAP
// version and correlation id without a context value, and so that status
// and bytes sent are counted where they happen.
type exchange struct {
	http.ResponseWriter
	start     time.Time
	backendAt time.Time // when the request was handed to the proxy
	id        string
	version   soap.Version
	route     *route
	body      *countingBody
	status    int
	sent      int64
	outcome   metrics.Outcome
	reason    error           // why the gateway answered itself; logged, never sent
	engine    string          // the engine that processed a secured request: engineTemplate or engineDOM
	signer    *trust.Identity // the verified signer of an accepted request
	username  string          // the verified UsernameToken's user of an accepted request
	ctx       context.Context // the server's request context: its cause tells a drain cut (drain.go)
	backend   backendMark     // what the route's transport saw of the backend's answer (stall.go)
	truncated bool            // the response was cut after its headers were sent
	ticket    limit.Ticket    // the limits' places the request holds until finish (limits.go)
	lease     *budget.Lease   // the body's bytes in the memory budget; nil when streamed (overload.go)
}

func (e *exchange) WriteHeader(code int) {
	// An informational response (100, 103 relayed by the proxy) is not the
	// exchange's status: the final one follows.
	if e.status == 0 && code >= 200 {
		e.status = code
		if e.route != nil && !e.backendAt.IsZero() {
			e.route.metrics.Backend(e.backend.since(e.backendAt))
		}
	}
	e.ResponseWriter.WriteHeader(code)
}

func (e *exchange) Write(p []byte) (int, error) {
	if e.status == 0 {
		e.WriteHeader(http.StatusOK)
	}
	n, err := e.ResponseWriter.Write(p)
	e.sent += int64(n)
	return n, err
}

// Flush lets the proxy stream responses of unknown length as they come.
func (e *exchange) Flush() { _ = http.NewResponseController(e.ResponseWriter).Flush() }

// Unwrap exposes the server's writer to http.ResponseController.
func (e *exchange) Unwrap() http.ResponseWriter { return e.ResponseWriter }

// received is the number of request body bytes read from the client.
func (e *exchange) received() int64 {
	if e.body == nil {
		return 0
	}
	return e.body.n.Load()
}

// countingBody counts request bytes and keeps the first read error, so that
// a failed exchange can be blamed on the client (slow, too large, gone)
// rather than on the backend. Its fields are atomic because the transport's
// body-writing goroutine may still be reading when the handler returns.
type countingBody struct {
	rc  io.ReadCloser
	n   atomic.Int64
	err atomic.Pointer[error]
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.n.Add(int64(n))
	if err != nil && err != io.EOF {
		// A copy declared here: only a failed Read moves it to the
		// heap, where &err would have moved err for every Read.
		first := err
		b.err.CompareAndSwap(nil, &first)
	}
	return n, err
}

func (b *countingBody) Close() error { return b.rc.Close() }

// readErr is the first error reading the client's body, or nil.
func (b *countingBody) readErr() error {
	if b == nil {
		return nil
	}
	if p := b.err.Load(); p != nil {
		return *p
	}
	return nil
}
