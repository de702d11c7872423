package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"
)

// errBackendStalled is a backend response whose body made no progress for
// the route's timeouts.backendBodyIdle. The transport's own timeout
// (timeouts.backend) ends when the headers arrive; without this a backend
// that stalls mid-body holds the request until the client gives up
// (issue 16).
var errBackendStalled = errors.New("gateway: backend response body stalled")

// stallTransport cuts a response whose body stalls: every Read of the body
// that waits longer than idle cancels the round trip's context, which
// makes the transport close the backend connection and the blocked Read
// fail with errBackendStalled. Only time spent waiting for the backend
// counts: while the proxy is busy writing to a slow client, no Read is
// outstanding and no timer runs (the client side is server.writeTimeout's).
type stallTransport struct {
	next http.RoundTripper
	idle time.Duration
}

func (t stallTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(req.Context())
	resp, err := t.next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel(nil)
		return nil, err
	}
	mark := stallMark(req.Context())
	if mark != nil {
		mark.headers.Store(time.Now().UnixNano())
	}
	resp.Body = &idleBody{rc: resp.Body, idle: t.idle, cancel: cancel, mark: mark}
	return resp, nil
}

// idleBody is a backend response body read under an idle timeout.
type idleBody struct {
	rc      io.ReadCloser
	idle    time.Duration
	cancel  context.CancelCauseFunc
	mark    *backendMark // the exchange's, or nil
	timer   *time.Timer  // armed only while a Read waits
	stalled atomic.Bool
}

func (b *idleBody) Read(p []byte) (int, error) {
	if b.stalled.Load() {
		return 0, b.stallErr()
	}
	if b.timer == nil {
		b.timer = time.AfterFunc(b.idle, b.stall)
	} else {
		b.timer.Reset(b.idle)
	}
	n, err := b.rc.Read(p)
	b.timer.Stop()
	if err != nil && err != io.EOF && b.stalled.Load() {
		// The transport's error says "canceled"; the reason is ours.
		err = b.stallErr()
	}
	return n, err
}

func (b *idleBody) stallErr() error {
	return fmt.Errorf("%w: no progress for %s (timeouts.backendBodyIdle)", errBackendStalled, b.idle)
}

// stall runs on the timer's goroutine when a Read waited idle.
func (b *idleBody) stall() {
	b.stalled.Store(true)
	if b.mark != nil {
		b.mark.stalled.Store(true)
	}
	b.cancel(errBackendStalled)
}

func (b *idleBody) Close() error {
	err := b.rc.Close()
	// After EOF the transport has already kept the connection for reuse;
	// before it, closing discarded the connection: cancelling is harmless
	// either way and releases the context.
	b.cancel(nil)
	return err
}

type stallKey struct{}

// backendMark is what the route's transport records on the exchange: that
// the backend's body stalled (when a streamed response is cut, the proxy
// only panics with http.ErrAbortHandler, and finish needs to know why),
// and when its response headers came, for wssgw_backend_duration_seconds:
// the exchange's own headers may go out later, after a response was read
// ahead (readahead.go) or signed (respond.go).
type backendMark struct {
	stalled atomic.Bool
	headers atomic.Int64 // UnixNano; 0 before the headers came
}

// since is the time from start to the backend's response headers, or to
// now if they did not come (an error the gateway answers itself).
func (m *backendMark) since(start time.Time) time.Duration {
	if h := m.headers.Load(); h != 0 {
		return time.Unix(0, h).Sub(start)
	}
	return time.Since(start)
}

// withStallMark lets the route's transport record on the exchange what it
// saw of the backend.
func withStallMark(r *http.Request, mark *backendMark) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), stallKey{}, mark))
}

func stallMark(ctx context.Context) *backendMark {
	m, _ := ctx.Value(stallKey{}).(*backendMark)
	return m
}
