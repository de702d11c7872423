package gateway

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/wssgw/wssgw/internal/metrics"
)

// logRequest writes the one line per request. It carries no message
// content: bodies hold partners' business data and secrets.
func (g *Gateway) logRequest(r *http.Request, e *exchange, elapsed time.Duration) {
	level := slog.LevelInfo
	if e.outcome != metrics.Ok && e.outcome != metrics.BackendFault {
		level = slog.LevelWarn
	}
	if !g.log.Enabled(context.Background(), level) {
		return
	}
	route := metrics.NoRoute
	if e.route != nil {
		route = e.route.name
	}
	attrs := []slog.Attr{
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
	}
	if e.reason != nil {
		attrs = append(attrs, slog.String("error", e.reason.Error()))
	}
	g.log.LogAttrs(context.Background(), level, "request", attrs...)
}
