package gateway

import (
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"time"

	"github.com/wssgw/wssgw/internal/limit"
	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/soap"
)

// Errors the gateway raises itself before forwarding.
var (
	errMethod      = errors.New("gateway: method not allowed")
	errContentType = errors.New("gateway: unsupported content type")
	errNoRoute     = errors.New("gateway: no route for path")
)

// Errors that say which side of a failed exchange is to blame. The proxy's
// error hook wraps the transport's error in one of them.
type (
	// clientBodyError is a failure reading the request body from the client.
	clientBodyError struct{ err error }
	// clientGoneError means the client cancelled the request.
	clientGoneError struct{ err error }
	// backendError is a failure talking to the backend.
	backendError struct{ err error }
)

func (e *clientBodyError) Error() string { return "gateway: reading request body: " + e.err.Error() }
func (e *clientBodyError) Unwrap() error { return e.err }
func (e *clientGoneError) Error() string { return "gateway: client went away: " + e.err.Error() }
func (e *clientGoneError) Unwrap() error { return e.err }
func (e *backendError) Error() string    { return "gateway: backend: " + e.err.Error() }
func (e *backendError) Unwrap() error    { return e.err }

// failure is the gateway's answer to an error: what the partner sees
// (status, fault code, reason) and what the operator sees (outcome).
type failure struct {
	status  int
	code    soap.Code
	reason  string
	outcome metrics.Outcome
	subcode *soap.QName
}

// classify maps every error the gateway answers itself to its failure. It is
// the one place where errors become statuses and faults; later stages plug
// their error kinds in here. Reasons are deliberately generic: the cause is
// logged with the correlation id, never sent.
func classify(err error) failure {
	var (
		tooLarge *http.MaxBytesError
		body     *clientBodyError
		gone     *clientGoneError
		backend  *backendError
		sec      *securityError
		bad      *malformedError
		version  *versionError
		limited  *limit.Refusal
	)
	switch {
	case errors.Is(err, errDrainCut):
		// Still running when the drain ended (drain.go): the partner may
		// retry against another instance; the connection closes next.
		return failure{http.StatusServiceUnavailable, soap.Receiver, "Service shutting down: retry the request", metrics.DrainCut, nil}
	case errors.As(err, &limited):
		// RFC 6585 §4; Retry-After is set by fail. The reason names no
		// limit: which one refused is logged and counted.
		return failure{http.StatusTooManyRequests, soap.Sender, "Too many requests: retry later", metrics.RateLimited, nil}
	case errors.As(err, &sec):
		// One fault for every security failure (DESIGN.md §5.6): the
		// reason is logged and counted, never sent, unless the policy
		// enables detailed faults for debugging with a partner.
		code, reason := sec.fault()
		return failure{http.StatusInternalServerError, soap.Sender, reason, metrics.SecurityRejected, wsseCode(code)}
	case errors.As(err, &bad):
		// The gate's refusal on a route that verifies nothing (gate.go):
		// one fault whatever the reason, which is logged.
		return failure{http.StatusBadRequest, soap.Sender, "Malformed SOAP message", metrics.BadRequest, nil}
	case errors.As(err, &version):
		// SOAP 1.1 §4.4.1, SOAP 1.2 Part 1 §5.4.7; HTTP 500 as for every
		// SOAP fault (SOAP 1.2 Part 2 §7.5.2.2).
		return failure{http.StatusInternalServerError, soap.VersionMismatch, "SOAP version mismatch", metrics.BadRequest, nil}
	case errors.Is(err, soap.ErrCharset):
		return failure{http.StatusUnsupportedMediaType, soap.Sender,
			"Unsupported charset: SOAP messages must be UTF-8", metrics.UnsupportedMediaType, nil}
	case errors.Is(err, errMethod):
		return failure{http.StatusMethodNotAllowed, soap.Sender, "Method not allowed: SOAP requests use POST", metrics.MethodNotAllowed, nil}
	case errors.Is(err, errContentType):
		return failure{http.StatusUnsupportedMediaType, soap.Sender,
			"Unsupported media type: expected text/xml, application/soap+xml or multipart/related", metrics.UnsupportedMediaType, nil}
	case errors.Is(err, errUpgrade):
		return failure{http.StatusBadRequest, soap.Sender, "Protocol upgrade not allowed", metrics.BadRequest, nil}
	case errors.Is(err, errPath):
		return failure{http.StatusBadRequest, soap.Sender, "Invalid request path", metrics.BadRequest, nil}
	case errors.Is(err, errNoRoute):
		return failure{http.StatusNotFound, soap.Sender, "No service at this path", metrics.Unrouted, nil}
	case errors.As(err, &tooLarge):
		return failure{http.StatusRequestEntityTooLarge, soap.Sender, "Request body too large", metrics.TooLarge, nil}
	case errors.As(err, &gone):
		return failure{499, soap.Sender, "Client closed the request", metrics.ClientCanceled, nil}
	case errors.As(err, &body) && isTimeout(body.err):
		return failure{http.StatusRequestTimeout, soap.Sender, "Request body not received in time", metrics.ClientTimeout, nil}
	case errors.Is(err, errUploadAborted) || errors.As(err, &body) && isAbort(body.err):
		// The client closed or reset its connection mid-body: not a
		// malformed message, and no one is left to read a fault.
		return failure{499, soap.Sender, "Client aborted the upload", metrics.ClientAbortedUpload, nil}
	case errors.As(err, &body):
		return failure{http.StatusBadRequest, soap.Sender, "Request body could not be read", metrics.BadRequest, nil}
	case errors.As(err, &backend) && errors.Is(backend.err, errBackendStalled):
		// The headers came in time, the body stopped (stall.go).
		return failure{http.StatusGatewayTimeout, soap.Receiver, "Backend service timed out", metrics.BackendStalled, nil}
	case errors.As(err, &backend) && isTimeout(backend.err) && !isDial(backend.err):
		return failure{http.StatusGatewayTimeout, soap.Receiver, "Backend service timed out", metrics.BackendTimeout, nil}
	case errors.As(err, &backend):
		return failure{http.StatusBadGateway, soap.Receiver, "Backend service unavailable", metrics.BackendUnavailable, nil}
	}
	return failure{http.StatusInternalServerError, soap.Receiver, "Internal gateway error", metrics.InternalError, nil}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// isDial reports a failure to connect: the backend is unavailable (502)
// even when the connect attempt timed out, as opposed to a backend that
// accepted the request and did not answer in time (504).
func isDial(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "dial"
}

// errUploadAborted marks a failed body read of a client whose request
// context is done: over HTTP/2 a reset stream ends the body with an error
// that names no connection reset.
var errUploadAborted = errors.New("gateway: client aborted the upload")

// isAbort reports a body read that ended because the client closed or
// reset its connection mid-body, as opposed to a slow client (timeout) or
// a malformed body.
func isAbort(err error) bool {
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EPIPE)
}

// cause is err as the exchange's context explains it: anything failing
// after the drain's cut is the cut's doing (drain.go), and a body read that
// failed because the client left is an aborted upload.
func (e *exchange) cause(err error) error {
	var body *clientBodyError
	switch {
	case e.ctx == nil || errors.Is(err, errDrainCut):
	case isDrainCut(e.ctx):
		return fmt.Errorf("%w: %w", errDrainCut, err)
	case e.ctx.Err() != nil && errors.As(err, &body) && !isTimeout(body.err):
		return fmt.Errorf("%w: %w", errUploadAborted, err)
	}
	return err
}

// fail answers the exchange with the fault for err. A client that went away
// gets nothing: there is no one to write to.
func (e *exchange) fail(err error) {
	err = e.cause(err)
	f := classify(err)
	e.outcome, e.reason = f.outcome, err
	// The backend did not answer; its latency histogram is for answers.
	e.backendAt = time.Time{}
	if f.outcome == metrics.ClientCanceled || f.outcome == metrics.ClientAbortedUpload {
		e.status = f.status
		return
	}
	h := e.Header()
	h.Set("Content-Type", e.version.ContentType())
	h.Set("Cache-Control", "no-store")
	if f.status == http.StatusMethodNotAllowed {
		h.Set("Allow", http.MethodPost)
	}
	if f.status == http.StatusRequestEntityTooLarge || f.outcome == metrics.BadRequest || f.outcome == metrics.ClientTimeout || f.outcome == metrics.DrainCut {
		// The rest of the body was not read; the connection cannot be reused.
		h.Set("Connection", "close")
	}
	if secs := retryAfter(err); secs > 0 {
		h.Set("Retry-After", strconv.Itoa(secs))
	}
	fault := soap.Fault{Code: f.code, Subcode: f.subcode, Reason: f.reason, CorrelationID: e.id}
	b := fault.Append(nil, e.version)
	h.Set("Content-Length", strconv.Itoa(len(b)))
	e.WriteHeader(f.status)
	_, _ = e.Write(b)
}

// retryAfter is the Retry-After of a refusal by a limit, in whole seconds
// rounded up (RFC 9110 §10.2.3 has no fractions), 0 for other errors.
func retryAfter(err error) int {
	var limited *limit.Refusal
	if !errors.As(err, &limited) {
		return 0
	}
	return max(1, int(math.Ceil(limited.RetryAfter.Seconds())))
}

// proxyError is the reverse proxy's error hook: it decides who is to blame
// for a failed round trip and answers with the matching fault.
func proxyError(w http.ResponseWriter, r *http.Request, err error) {
	e, ok := w.(*exchange)
	if !ok {
		http.Error(w, "bad gateway", http.StatusBadGateway)
		return
	}
	switch {
	case e.body.readErr() != nil:
		err = &clientBodyError{e.body.readErr()}
	case r.Context().Err() != nil:
		err = &clientGoneError{err}
	default:
		err = &backendError{err}
	}
	e.fail(err)
}
