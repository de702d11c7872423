package gateway

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"
)

// errDrainCut is the cause with which the server cancels the contexts of the
// requests still running when shutdown.drainTimeout ends, before it closes
// their connections: the gateway then records them as drain_cut, not as
// clients that went away (issue 16).
var errDrainCut = errors.New("gateway: cut at the end of shutdown.drainTimeout")

// drainCutGrace is how long the requests cut at the end of a drain get to
// send their 503 fault before their connections are closed. Writing a
// fault takes milliseconds; a handler still reading a slow client's body
// cannot be woken by the cancel and is cut when the grace ends.
const drainCutGrace = time.Second

// isDrainCut reports whether ctx, a request's, was cancelled by the drain's
// cut rather than by its client.
func isDrainCut(ctx context.Context) bool {
	return ctx != nil && errors.Is(context.Cause(ctx), errDrainCut)
}

// cutRemaining ends the requests that outlived the drain: their contexts
// are cancelled with errDrainCut (every request context derives from the
// server's base context), the handlers answer 503 or abort their
// responses, and whatever is left after drainCutGrace is closed. It then
// waits up to drainCutGrace more for the handlers woken by the close (a
// body read failing) to write their log lines before the process exits.
func cutRemaining(srv *http.Server, running *handlers, cut context.CancelCauseFunc) {
	cut(errDrainCut)
	ctx, cancel := context.WithTimeout(context.Background(), drainCutGrace)
	defer cancel()
	if err := srv.Shutdown(ctx); err == nil {
		return
	}
	_ = srv.Close()
	running.wait(drainCutGrace)
}

// handlers counts the running handlers of the data listener: closing a
// connection does not wait for its handler.
type handlers struct {
	next http.Handler
	wg   sync.WaitGroup
}

func (h *handlers) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.wg.Add(1)
	defer h.wg.Done()
	h.next.ServeHTTP(w, r)
}

// wait waits for the running handlers to return, at most d.
func (h *handlers) wait(d time.Duration) {
	done := make(chan struct{})
	go func() { h.wg.Wait(); close(done) }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}
