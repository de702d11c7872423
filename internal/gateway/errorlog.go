package gateway

import (
	"context"
	"log"
	"log/slog"
	"strings"

	"github.com/wssgw/wssgw/internal/metrics"
)

// newErrorLog is the ErrorLog of an http.Server or a ReverseProxy: net/http's
// own lines (failed TLS handshakes, accept errors, panics, copy errors)
// go to slog, so that a JSON log stays JSON and nothing fails without a
// trace. source names the writer (the listener, or "proxy"). On a
// listener, onHandshake (when not nil) counts each failed TLS handshake
// by its reason.
func newErrorLog(l *slog.Logger, source string, onHandshake func(reason string)) *log.Logger {
	return log.New(&errorLogWriter{log: l, source: source, onHandshake: onHandshake}, "", 0)
}

type errorLogWriter struct {
	log         *slog.Logger
	source      string
	onHandshake func(reason string)
}

// handshakePrefix starts net/http's line for a failed TLS handshake:
// "http: TLS handshake error from <remote>: <error>".
const handshakePrefix = "http: TLS handshake error from "

func (w *errorLogWriter) Write(p []byte) (int, error) {
	msg := strings.TrimSpace(string(p))
	ctx := context.Background()
	if rest, ok := strings.CutPrefix(msg, handshakePrefix); ok {
		remote, detail, _ := strings.Cut(rest, ": ")
		reason := handshakeReason(detail)
		if w.onHandshake != nil {
			w.onHandshake(reason)
		}
		// A client that tried a certificate and failed is a partner to
		// call; port scans and probes that hang up are routine.
		level := slog.LevelInfo
		if reason == metrics.TLSNoCertificate || reason == metrics.TLSBadCertificate {
			level = slog.LevelWarn
		}
		w.log.LogAttrs(ctx, level, "tls handshake failed",
			slog.String("listener", w.source), slog.String("remote", remote),
			slog.String("reason", reason), slog.String("error", detail))
		return len(p), nil
	}
	w.log.LogAttrs(ctx, slog.LevelWarn, "net/http", slog.String("source", w.source), slog.String("error", msg))
	return len(p), nil
}

// handshakeReason sorts a server-side handshake error into the closed set
// of metrics.TLS* reasons, from the crypto/tls error text (its errors are
// not typed).
func handshakeReason(detail string) string {
	d := strings.ToLower(detail)
	switch {
	case strings.Contains(d, "didn't provide a certificate"), strings.Contains(d, "certificate required"):
		return metrics.TLSNoCertificate
	case strings.Contains(d, "certificate"), strings.Contains(d, "x509:"):
		// failed to verify certificate, bad/unknown/expired certificate,
		// unknown certificate authority (the client's alert about ours).
		return metrics.TLSBadCertificate
	case strings.Contains(d, "http request to an https server"),
		strings.Contains(d, "does not look like a tls handshake"),
		strings.Contains(d, "unsupported versions"), strings.Contains(d, "protocol version"),
		strings.Contains(d, "no cipher suite"), strings.Contains(d, "handshake failure"),
		strings.Contains(d, "no mutually supported"), strings.Contains(d, "no application protocol"),
		strings.Contains(d, "unexpected message"), strings.Contains(d, "oversized record"):
		return metrics.TLSProtocol
	default:
		return metrics.TLSOther
	}
}
