package gateway

import (
	"errors"
	"net/http"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/limit"
	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/wss"
)

// headerForwardedFor is read only when clients.trustedProxies is set
// (limit.Set.Client).
const headerForwardedFor = "X-Forwarded-For"

// applyLimits applies cfg to the limits' state and gives each route its
// limiter and rejection counters.
//
// A configuration reload carries the state over (issue 16, the reload
// contract): the new gateway takes the running one's Set as it is
// (next.limits = prev.limits) while it is built, and once it is built and
// about to serve, next.applyLimits(cfg) reconfigures the Set in place, so
// a failed reload leaves the running limits untouched. Buckets keep their
// tokens, requests in flight on the old gateway stay counted, and Close
// leaves the Set alone (it holds no resources).
func (g *Gateway) applyLimits(cfg *config.Config) {
	g.limits.Reconfigure(cfg)
	for _, r := range g.routes {
		r.limiter = g.limits.Route(r.name)
		r.rateLimits = g.metrics.RateLimits(r.name)
	}
	limits := g.limits
	g.metrics.WatchRateLimits(func(yield func(route, scope string, tracked int, forgotten uint64)) {
		limits.Stats(func(route string, st limit.Stats) {
			yield(route, metrics.ScopeClient, st.Clients, st.ClientsEvicted)
			yield(route, metrics.ScopeSigner, st.Signers, st.SignersEvicted)
		})
	})
}

// admitClient applies the route's total and per-client limits, before the
// body is read. The request holds its places until finish.
func (g *Gateway) admitClient(r *http.Request, e *exchange) error {
	rt := e.route
	if rt.limiter == nil {
		return nil
	}
	client := g.limits.Client(r.RemoteAddr, r.Header[headerForwardedFor])
	return rt.refused(rt.limiter.Admit(&e.ticket, client))
}

// admitSigner applies the route's per-signer limit to a verified request,
// before it is forwarded. The signer is the certificate that signed
// (signer_sha256 in the request log), else the UsernameToken's username; a
// message with neither is limited by address only.
func admitSigner(e *exchange, res *wss.Result) error {
	rt := e.route
	if rt.limiter == nil || res == nil {
		return nil
	}
	var s limit.Signer
	switch {
	case e.signer != nil:
		s.Thumbprint = e.signer.SHA256
	case res.Username != nil:
		s.Username = res.Username.Username
	}
	return rt.refused(rt.limiter.AdmitSigner(&e.ticket, s))
}

// refused counts a refusal by its scope and passes err on. An admitted
// request returns before errors.As, whose target would escape to the heap
// on every request.
func (rt *route) refused(err error) error {
	if err == nil {
		return nil
	}
	var f *limit.Refusal
	if errors.As(err, &f) {
		rt.rateLimits.Rejected(f.Scope.String())
	}
	return err
}
