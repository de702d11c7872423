package gateway

import (
	"errors"
	"io"
	"net/http"
	"runtime"

	"github.com/wssgw/wssgw/internal/budget"
	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/soap"
)

// memoryLimits are the budget's limits from server.memory: domWorkers 0 is
// GOMAXPROCS, which the Go runtime sets from the container's CPU limit.
func memoryLimits(m config.Memory) budget.Limits {
	workers := m.DOMWorkers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	return budget.Limits{Bytes: int64(m.InflightBytes), Workers: workers, QueueWait: m.QueueWait, RetryAfter: m.RetryAfter}
}

// reserveBody makes the request's body count against the memory budget
// when the route reads it whole (every route with a gate; unsafeSkipGate
// streams it): its declared length is reserved before a byte is read, so
// that a burst of large requests is refused while the gateway still has
// the memory to answer, and what a chunked body brings is reserved as it
// is read. The lease is released when the request ends (finish).
func (g *Gateway) reserveBody(e *exchange, r *http.Request, kind soap.Kind, rc io.ReadCloser) (io.ReadCloser, error) {
	rt := e.route
	if rt.gate == nil {
		return rc, nil
	}
	limit := rt.gate.held(kind, rt.maxBodyBytes)
	e.lease = g.budget.Lease()
	if r.ContentLength > 0 {
		if err := e.lease.Reserve(min(r.ContentLength, limit)); err != nil {
			return nil, err
		}
	}
	return e.lease.Reader(rc, limit), nil
}

// held is the most of a body of kind a gated route holds in memory: an
// envelope whole; of an MTOM/SwA package the root part and the attachments
// below the spool threshold (mime.Limits), the rest is on disk.
func (g *gate) held(kind soap.Kind, maxBody int64) int64 {
	if kind != soap.Multipart {
		return maxBody
	}
	l := g.mime
	return min(maxBody, l.MaxRootSize+int64(l.MaxParts)*l.SpoolThreshold+64<<10)
}

// overloadReason is the budget's reason for a refusal, "" for any other
// error.
func overloadReason(err error) string {
	var oe *budget.OverloadError
	if errors.As(err, &oe) {
		return oe.Reason
	}
	return ""
}
