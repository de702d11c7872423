package gateway

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/wssgw/wssgw/internal/limit"
	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/wss"
)

// Engines, the engine field of the request log line.
const (
	engineTemplate = metrics.EngineTemplate // a learned template matched (the fast path)
	engineDOM      = metrics.EngineDOM      // the DOM engine processed the message
)

// engineOf is the engine that processed a secured message, from its
// template lookup; "" when no engine ran (the body was not read or not
// parsed, or the policy forwards it unparsed).
func engineOf(res *wss.Result) string {
	switch {
	case res == nil:
		return ""
	case res.Lookup == metrics.LookupHit:
		return engineTemplate
	default:
		return engineDOM
	}
}

// logRequest writes the one line per request. It carries no message
// content: bodies hold partners' business data and secrets.
func (g *Gateway) logRequest(r *http.Request, e *exchange, elapsed time.Duration) {
	level := slog.LevelInfo
	if e.outcome != metrics.Ok && e.outcome != metrics.BackendFault {
		level = slog.LevelWarn
	}
	h := g.log.Handler()
	if !h.Enabled(context.Background(), level) {
		return
	}
	route := metrics.NoRoute
	if e.route != nil {
		route = e.route.name
	}
	// The record is made here rather than by Logger.LogAttrs, which takes
	// the caller's program counter (runtime.Callers) for every line though
	// no handler of wssgw prints the source: a tenth of the gateway's own
	// time per request (issue 14). The attributes fit in an array on the
	// stack.
	var buf [20]slog.Attr
	attrs := append(buf[:0],
		slog.String("id", e.id),
		slog.String("route", route),
		slog.String("method", r.Method),
		slog.String("path", r.URL.Path),
		slog.Int("status", e.status),
		slog.String("outcome", e.outcome.String()),
		slog.Float64("duration_ms", float64(elapsed.Nanoseconds())/1e6),
		slog.Int64("bytes_in", e.received()),
		slog.Int64("bytes_out", e.sent),
		slog.String("soap", e.version.String()),
		slog.String("remote", r.RemoteAddr),
	)
	if e.route != nil {
		policy := "none"
		if e.route.security != nil {
			policy = e.route.security.policy.Name
		} else if e.route.egress != nil {
			policy = e.route.egress.policy // what the partner's response met
		}
		attrs = append(attrs, slog.String("policy", policy))
	}
	if e.engine != "" {
		attrs = append(attrs, slog.String("engine", e.engine))
	}
	if e.signer != nil {
		// The audit trail of which partner certificate was accepted: its
		// subject and the SHA-256 thumbprint that tells renewed
		// certificates of one subject apart.
		attrs = append(attrs, slog.String("signer", e.signer.Subject), slog.String("signer_sha256", e.signer.SHA256))
	}
	if e.username != "" {
		// The verified UsernameToken's user: the partner of a route
		// whose policy authenticates by password.
		attrs = append(attrs, slog.String("username", e.username))
	}
	if e.truncated {
		// The status went out with the headers, but the body was cut
		// (outcome says why, bytes_out how much): the client got a
		// broken connection, not a complete answer with that status.
		attrs = append(attrs, slog.Bool("truncated", true))
	}
	if e.reason != nil {
		var (
			se      *securityError
			limited *limit.Refusal
		)
		if errors.As(e.reason, &se) {
			attrs = append(attrs, slog.String("reason", se.err.Reason.String()))
		} else if why := overloadReason(e.reason); why != "" {
			attrs = append(attrs, slog.String("reason", why))
		}
		if errors.As(e.reason, &limited) {
			// Which limit refused (client_rate, signer_concurrency, ...)
			// and whom: the address prefix, or the signer.
			attrs = append(attrs, slog.String("reason", limited.Scope.String()+"_"+limited.Kind.String()),
				slog.String("client", limited.Client))
		}
		attrs = append(attrs, slog.String("error", e.reason.Error()))
	}
	rec := slog.NewRecord(time.Now(), level, "request", 0)
	rec.AddAttrs(attrs...)
	_ = h.Handle(context.Background(), rec)
}
