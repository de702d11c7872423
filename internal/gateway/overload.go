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
// GOMAXPROCS, which the Go runtime sets from the container's CPU limit,
// and domShare and firstSightShare are shares of it.
func memoryLimits(m config.Memory) budget.Limits {
	procs := gomaxprocs()
	workers := m.DOMWorkers
	if workers == 0 {
		workers = procs
	}
	return budget.Limits{Bytes: int64(m.InflightBytes), Workers: workers, QueueWait: m.QueueWait, RetryAfter: m.RetryAfter,
		Share: m.DOMShare, Procs: procs, FirstSightShare: m.FirstSightShare}
}

// gomaxprocs is runtime.GOMAXPROCS(0); tests set the CPUs a share is of.
var gomaxprocs = func() int { return runtime.GOMAXPROCS(0) }

// reserveBody makes the request's body count against the memory budget
// when the route reads it whole (every route with a gate; unsafeSkipGate
// streams it): its declared length is reserved before a byte is read, so
// that a burst of large requests is refused while the gateway still has
// the memory to answer, and what a chunked body brings is reserved as it
// is read. The lease is released when the request ends (finish).
func (g *Gateway) reserveBody(e *exchange, r *http.Request, kind soap.Kind, rc io.ReadCloser, maxBody int64) (io.ReadCloser, error) {
	rt := e.route
	if rt.gate == nil {
		return rc, nil
	}
	if r.ContentLength > maxBody {
		return nil, &http.MaxBytesError{Limit: maxBody}
	}
	held := rt.gate.held(kind, maxBody)
	if g.budgetBytes > 0 {
		// A package whose in-memory parts could exceed the whole budget
		// holds all of it at most, so that it is admitted when alone.
		held = min(held, g.budgetBytes)
	}
	e.lease = g.budget.Lease()
	if r.ContentLength > 0 {
		if err := e.lease.Reserve(min(r.ContentLength, held)); err != nil {
			return nil, err
		}
	}
	return e.lease.Reader(rc, held), nil
}

// bodyLimit is the largest body a request of kind may have on rt: the
// route's maxBodyBytes, and for a plain envelope, which is held in memory
// whole, the memory budget too: a larger one could never be admitted, so
// it is refused as too large (413), not told to come back later (503).
func (g *Gateway) bodyLimit(rt *route, kind soap.Kind) int64 {
	if rt.gate == nil || kind == soap.Multipart || g.budgetBytes <= 0 {
		return rt.maxBodyBytes
	}
	return min(rt.maxBodyBytes, g.budgetBytes)
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
