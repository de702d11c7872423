package gateway

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/wssgw/wssgw/internal/budget"
	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/limit"
	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/soap"
)

// Gateway is the data-plane handler: it checks, routes and forwards SOAP
// requests.
type Gateway struct {
	routes   routeTable
	unrouted *metrics.RouteMetrics
	metrics  *metrics.Metrics
	log      *slog.Logger
	policies *policies
	stop     context.CancelFunc // stops reloading response signing keys
	limits   *limit.Set         // rate and concurrency limits (limits.go); outlives a reload
	// budget bounds in-flight body bytes and DOM-engine work across
	// routes (overload.go). It outlives a reload: the next Gateway takes
	// it over (build with prev) so that requests in flight stay counted.
	budget *budget.Budget
	// budgetBytes is server.memory.inflightBytes (0: no bound).
	budgetBytes int64
}

// New builds the gateway for a validated configuration.
func New(cfg *config.Config, m *metrics.Metrics, log *slog.Logger) (*Gateway, error) {
	return build(cfg, m, log, nil)
}

// build builds a gateway; prev, when not nil, is the running gateway of a
// configuration reload, whose long-lived state the new one borrows
// (carry.go). On error nothing of prev has changed.
func build(cfg *config.Config, m *metrics.Metrics, log *slog.Logger, prev *Gateway) (*Gateway, error) {
	pool := newBufferPool()
	var prevPolicies *policies
	var b *budget.Budget
	if prev != nil {
		// The budget is shared, and reconfigured only once the build
		// succeeded (adopt).
		prevPolicies, b = prev.policies, prev.budget
	} else {
		b = budget.New(memoryLimits(cfg.Server.Memory), m)
	}
	ps, err := newPolicies(cfg, m, log, prevPolicies)
	if err != nil {
		return nil, err
	}
	routes := make([]*route, 0, len(cfg.Routes))
	ctx, stop := context.WithCancel(context.Background())
	responders := map[string]*responder{}
	reserved := newReservedHeaders(cfg.Routes)
	for _, rc := range cfg.Routes {
		r, err := newRoute(rc, m, pool, reserved)
		if err == nil {
			// The proxy's own lines: a response body cut while copying.
			r.proxy.ErrorLog = newErrorLog(log.With("route", rc.Name), "proxy", nil)
		}
		if err == nil && rc.Policy != config.PolicyNone {
			r.security, err = newSecurity(rc, ps.byName[rc.Policy], ps.metrics[rc.Policy], cfg.XML, cfg.MIME, ps.templates[rc.Policy], log, b)
		}
		if err == nil && rc.Policy != config.PolicyNone {
			err = attachResponder(ctx, r, rc.Policy, cfg.Policies[rc.Policy].Responses, cfg.XML, cfg.MIME, responders, m, log)
		}
		if err == nil {
			err = r.attachGate(rc, cfg.XML, cfg.MIME)
		}
		if err == nil && rc.IsEgress() {
			err = attachEgress(ctx, r, rc, ps.byName[rc.Egress.Response.Policy], cfg, m, log, b)
		}
		if err != nil {
			stop()
			ps.close()
			return nil, err
		}
		m.WatchOverload(rc.Name)
		routes = append(routes, r)
	}
	if f := cfg.Templates.ImportFile; f != "" && cfg.Templates.Enabled {
		warmStart(f, routes, ps.fresh(), log)
	}
	g := &Gateway{
		routes:   newRouteTable(routes),
		unrouted: m.Route(metrics.NoRoute),
		metrics:  m,
		log:      log,
		policies: ps,
		stop:     stop,
		budget:   b,

		budgetBytes: int64(cfg.Server.Memory.InflightBytes),
	}
	if prev != nil {
		// Reconfigured by Server.reload once the build succeeded (adopt).
		g.limits = prev.limits
		return g, nil
	}
	g.limits = limit.NewSet()
	g.adopt(cfg)
	return g, nil
}

// adopt applies cfg to the state a gateway shares with the one it
// replaces (carry.go): the memory budget and the limits. A reload calls it
// only once the new gateway is built, so that a failed reload leaves them
// as they were.
func (g *Gateway) adopt(cfg *config.Config) {
	g.budget.Reconfigure(memoryLimits(cfg.Server.Memory))
	g.applyLimits(cfg)
}

// Close stops reloading key material and closes the replay store, as far
// as this gateway still owns them (carry.go).
func (g *Gateway) Close() {
	g.stop()
	g.policies.close()
	// A reload builds new backend connection pools; the replaced ones'
	// idle connections would otherwise linger until timeouts.idle.
	for _, r := range g.routes {
		closeIdle(r.proxy.Transport)
	}
}

// closeIdle closes the idle connections of the transport under a route's
// wrappers (TestReloadLeaksNothing fails on a wrapper missing here).
func closeIdle(rt http.RoundTripper) {
	for {
		switch t := rt.(type) {
		case noSwitchTransport:
			rt = t.next
		case stallTransport:
			rt = t.next
		case interface{ CloseIdleConnections() }:
			t.CloseIdleConnections()
			return
		default:
			return
		}
	}
}

// ServeHTTP handles one SOAP request.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e := &exchange{ResponseWriter: w, start: time.Now(), id: requestID(r.Header.Get(HeaderRequestID)), ctx: r.Context()}
	g.metrics.InFlight().Inc()
	defer g.finish(e, r)
	w.Header().Set(HeaderRequestID, e.id)

	kind, version := soap.Classify(r.Header.Get("Content-Type"))
	e.version = version
	if err := refuse(r); err != nil {
		e.fail(err)
		return
	}
	e.route = g.routes.match(r.URL.Path)
	if err := admit(r, e.route, kind); err != nil {
		e.fail(err)
		return
	}
	// Before the body is read: a client over its limit costs no reading,
	// gating or verification (limits.go).
	if err := g.admitClient(r, e); err != nil {
		e.fail(err)
		return
	}
	g.forward(w, r, e, kind)
}

// refuse applies the checks made on every request before routing: no
// protocol switch (upgrade.go) and a canonical path (path.go), so that the
// route chosen and the resource the backend serves are the same.
func refuse(r *http.Request) error {
	if err := checkUpgrade(r.Header); err != nil {
		return err
	}
	ignoreOffer(r.Header)
	return checkPath(r)
}

// admit applies the checks that need no body: route, method, content type,
// declared length.
func admit(r *http.Request, rt *route, kind soap.Kind) error {
	switch {
	case rt == nil:
		return errNoRoute
	case r.Method != http.MethodPost:
		return errMethod
	case kind == soap.Unsupported:
		return fmt.Errorf("%w: %q", errContentType, r.Header.Get("Content-Type"))
	case r.ContentLength > rt.maxBodyBytes:
		return &http.MaxBytesError{Limit: rt.maxBodyBytes}
	}
	return nil
}

// forward streams the request to the route's backend and the response back.
func (g *Gateway) forward(w http.ResponseWriter, r *http.Request, e *exchange, kind soap.Kind) {
	rt := e.route
	// The read deadline is per route, so it is set here rather than as the
	// server's ReadTimeout; the server resets it for the next request.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(rt.readTimeout))
	limit := g.bodyLimit(rt, kind)
	rc, err := g.reserveBody(e, r, kind, http.MaxBytesReader(w, r.Body, limit), limit)
	if err != nil {
		e.fail(err)
		return
	}
	e.body = &countingBody{rc: rc}
	r.Body = e.body
	ctype := r.Header.Get("Content-Type")
	if rt.gate != nil {
		if err := rt.gate.admit(r, kind); err != nil {
			e.fail(err)
			return
		}
	}
	switch {
	case rt.egress != nil:
		// The legacy client's plain request, secured for the partner
		// (egress.go).
		if r, err = rt.egress.secure(r, e.body, kind, e.version, rt); err != nil {
			e.fail(err)
			return
		}
	case rt.security != nil:
		// A secured request is read whole and verified before a byte of
		// it reaches the backend (DESIGN.md §5.4).
		out, res, err := rt.security.secure(r.Context(), r, e.body, rt.metrics, kind, e.version)
		e.engine = engineOf(res)
		if err != nil {
			e.fail(err)
			return
		}
		if res != nil {
			e.signer = res.Signer()
			if res.Username != nil {
				e.username = res.Username.Username
			}
		}
		// After verification, before forwarding: the partner's share.
		if err := admitSigner(e, res); err != nil {
			e.fail(err)
			return
		}
		if rt.responder != nil {
			r = withRequester(r, res, rt.responder.cfg.SignatureConfirmation)
		}
		r = withIdentity(r, identityOf(rt.security.identity, res))
		if kind != soap.Multipart { // secure set a multipart body itself
			setBody(r, out)
		}
	case rt.gate != nil:
		// Pass-through is read whole and gated too (gate.go).
		if err := rt.gate.pass(r.Context(), r, e.body, kind, e.version, rt.metrics); err != nil {
			e.fail(err)
			return
		}
	}
	if rt.gate != nil && kind == soap.Envelope {
		// The label of the bytes that were gated: UTF-8 (charset.go).
		// Most requests already carry it, as their one Content-Type.
		if ct := soap.ForwardContentType(ctype, e.version); ct != ctype || len(r.Header["Content-Type"]) != 1 {
			r.Header.Set("Content-Type", ct)
		}
	}
	r.Header.Set(HeaderRequestID, e.id)
	r = withStallMark(r, &e.backend)
	e.backendAt = time.Now()
	rt.proxy.ServeHTTP(e, r)
}

// setBody makes data r's body for the backend, with its length.
func setBody(r *http.Request, data []byte) {
	r.Body = io.NopCloser(bytes.NewReader(data))
	r.ContentLength = int64(len(data))
	r.Header.Del("Transfer-Encoding")
}

// finish records the request's metrics and its log line. A proxy that
// aborts a streamed response panics with http.ErrAbortHandler; that is
// recorded too (aborted) and the panic passed on, so the server cuts the
// connection instead of sending a truncated response that looks complete.
func (g *Gateway) finish(e *exchange, r *http.Request) {
	p := recover()
	e.ticket.Release()
	if p != nil {
		e.aborted(r, p)
	} else if e.reason == nil {
		e.outcome = metrics.Ok
		if e.status >= 500 {
			e.outcome = metrics.BackendFault
		}
	}
	if e.lease != nil {
		e.lease.Release()
	}
	elapsed := time.Since(e.start)
	g.metrics.InFlight().Dec()
	rm := g.unrouted
	if e.route != nil {
		rm = e.route.metrics
		if e.outcome == metrics.Overloaded {
			g.metrics.Overloaded(e.route.name, overloadReason(e.reason))
		}
	}
	rm.Done(e.outcome, elapsed, e.received(), e.sent)
	g.logRequest(r, e, elapsed)
	if p != nil {
		panic(p)
	}
}

// aborted records a response the proxy cut (panic p) by its true cause:
// the backend's body stalled, the server cut it at the end of a drain, the
// client went away, or else the backend broke off. The log line says the
// response was truncated when its headers had been sent: its status was
// not a complete answer.
func (e *exchange) aborted(r *http.Request, p any) {
	e.truncated = e.status != 0
	cause := fmt.Errorf("gateway: response aborted: %v", p)
	switch {
	case e.backend.stalled.Load():
		e.outcome, e.reason = metrics.BackendStalled, fmt.Errorf("%w (timeouts.backendBodyIdle): %w", errBackendStalled, cause)
	case isDrainCut(r.Context()):
		e.outcome, e.reason = metrics.DrainCut, fmt.Errorf("%w: %w", errDrainCut, cause)
	case r.Context().Err() != nil:
		e.outcome, e.reason = metrics.ClientCanceled, cause
	default:
		e.outcome, e.reason = metrics.BackendAborted, cause
	}
}
