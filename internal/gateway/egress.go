package gateway

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/dom"
	"github.com/wssgw/wssgw/internal/egress"
	"github.com/wssgw/wssgw/internal/metrics"
	wmime "github.com/wssgw/wssgw/internal/mime"
	"github.com/wssgw/wssgw/internal/reload"
	"github.com/wssgw/wssgw/internal/soap"
	"github.com/wssgw/wssgw/internal/wss"
)

// egressRoute is the gateway side of a route of kind egress (issue 15):
// the legacy client's request is gated and secured before the proxy sends
// it to the partner (the route's backend), and the partner's response is
// verified in the proxy's response hook before a byte of it is relayed.
type egressRoute struct {
	client  *egress.Client
	maxBody int64        // egress.response.maxBodyBytes
	mime    wmime.Limits // MTOM responses
	// requestMIME bounds the legacy client's MTOM/SwA requests (mime.*).
	requestMIME wmime.Limits
	partner     string // the backend URL, for the log
	policy      string // egress.response.policy, for the request log line
	results     *metrics.EgressMetrics
	log         *slog.Logger
}

// egressRequestError is a legacy request that could not be secured.
type egressRequestError struct{ err error }

func (e *egressRequestError) Error() string {
	return "gateway: egress request not secured: " + e.err.Error()
}
func (e *egressRequestError) Unwrap() error { return e.err }

// attachEgress makes rt an egress route: rc's request side and response
// side, with the compiled response policy p.
func attachEgress(ctx context.Context, rt *route, rc config.Route, p *wss.Policy, cfg *config.Config, m *metrics.Metrics, log *slog.Logger, workers dom.Workers) error {
	lim := egress.Limits{
		Request:  requestGateConfig(rc, cfg.XML),
		Response: requestGateConfig(config.Route{MaxBodyBytes: rc.Egress.Response.MaxBodyBytes}, cfg.XML),
		MIME:     cfg.MIME.Limits(),
	}
	lim.MIME.MaxRootSize = min(lim.MIME.MaxRootSize, int64(rc.Egress.Response.MaxBodyBytes))
	ro := reload.Options{Logger: log, Observer: m.KeyReloadObserver(metrics.KeyKindSigning)}
	c, err := egress.New(ctx, rc.Name, rc.Egress, p, lim, ro)
	if err != nil {
		return err
	}
	c.LimitWorkers(workers) // the DOM-engine workers of the memory budget (overload.go)
	// The gateway that built the client ends ctx when it closes (after a
	// reload): its certificates are then no longer exported.
	context.AfterFunc(ctx, m.WatchCertificates(func(yield func(string, *x509.Certificate)) {
		signing, partner := c.Certificates()
		if signing != nil {
			yield(metrics.UseSigning, signing)
		}
		if partner != nil {
			yield(metrics.UseTrust, partner)
		}
	}))
	eg := &egressRoute{client: c, maxBody: int64(rc.Egress.Response.MaxBodyBytes), mime: lim.MIME, requestMIME: cfg.MIME.Limits(), partner: rc.Backend,
		policy: rc.Egress.Response.Policy, results: m.Egress(rc.Name), log: log.With("route", rc.Name)}
	rt.egress = eg
	rt.proxy.ModifyResponse = func(resp *http.Response) error { return eg.modify(rt, resp) }
	rt.proxy.ErrorHandler = eg.proxyError
	return nil
}

type egressKey struct{}

// secure reads and secures the legacy client's request and makes it r's
// body; the returned request carries what the response hook checks.
func (eg *egressRoute) secure(r *http.Request, body io.Reader, kind soap.Kind, v soap.Version, rt *route) (*http.Request, error) {
	if kind == soap.Multipart {
		return eg.securePackage(r, body, v, rt)
	}
	data, err := readRequest(body, r.ContentLength)
	if err != nil {
		return r, err
	}
	if err := rt.gate.check(data, v, rt.metrics); err != nil {
		eg.results.Result(metrics.EgressSecureFailed)
		return r, err
	}
	start := time.Now()
	req, err := eg.client.Secure(data)
	rt.metrics.Stage(metrics.StageSign, time.Since(start))
	if err != nil {
		eg.results.Result(metrics.EgressSecureFailed)
		if errors.Is(err, egress.ErrRequest) {
			return r, &malformedError{err}
		}
		return r, &egressRequestError{err}
	}
	setBody(r, req.Body)
	return r.WithContext(context.WithValue(r.Context(), egressKey{}, req)), nil
}

// securePackage reads the legacy client's MTOM/SwA request (attachments
// spooled), gates its root part, secures it and makes the package, with the
// secured root, r's body.
func (eg *egressRoute) securePackage(r *http.Request, body io.Reader, v soap.Version, rt *route) (*http.Request, error) {
	pkg, err := readPackage(r.Context(), r, body, eg.requestMIME)
	var bad *badPackageError
	if errors.As(err, &bad) {
		eg.results.Result(metrics.EgressSecureFailed)
		return r, &malformedError{err}
	}
	if err != nil {
		return r, err
	}
	if err := rt.gate.check(pkg.RootBytes, rootVersion(pkg, v), rt.metrics); err != nil {
		_ = pkg.Close()
		eg.results.Result(metrics.EgressSecureFailed)
		return r, err
	}
	start := time.Now()
	req, err := eg.client.SecurePackage(pkg)
	rt.metrics.Stage(metrics.StageSign, time.Since(start))
	if err != nil {
		_ = pkg.Close()
		eg.results.Result(metrics.EgressSecureFailed)
		if errors.Is(err, egress.ErrRequest) {
			return r, &malformedError{err}
		}
		return r, &egressRequestError{err}
	}
	sendPackage(r, pkg, req.Body)
	return r.WithContext(context.WithValue(r.Context(), egressKey{}, req)), nil
}

// modify verifies the partner's response before the proxy relays it. What
// fails verification is never relayed: modify returns an
// *egress.RejectedError, which proxyError answers with a 502 fault.
func (eg *egressRoute) modify(rt *route, resp *http.Response) error {
	req, _ := resp.Request.Context().Value(egressKey{}).(*egress.Request)
	if req == nil {
		resp.Body.Close()
		return errors.New("gateway: egress response without its request")
	}
	if ce := resp.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		resp.Body.Close()
		return &egress.RejectedError{Reason: wss.ReasonMalformed.String(), Err: fmt.Errorf("Content-Encoding %q cannot be verified", ce)}
	}
	kind, _ := soap.Classify(resp.Header.Get("Content-Type"))
	switch {
	case kind == soap.Multipart:
		return eg.verifyPackage(rt, req, resp)
	case kind == soap.Envelope:
		return eg.verify(rt, req, resp)
	case resp.ContentLength == 0 || resp.StatusCode == http.StatusNoContent:
		// A one-way operation's empty 202 carries nothing to verify.
		eg.results.Result(metrics.EgressPassed)
		return nil
	}
	resp.Body.Close()
	return &egress.RejectedError{Reason: wss.ReasonMalformed.String(), Err: fmt.Errorf("not a SOAP response: %q", resp.Header.Get("Content-Type"))}
}

// verify reads a plain SOAP response (bounded), verifies it and replaces
// it with the plaintext.
func (eg *egressRoute) verify(rt *route, req *egress.Request, resp *http.Response) error {
	if resp.ContentLength > eg.maxBody {
		resp.Body.Close()
		return &egress.RejectedError{Reason: wss.ReasonMalformed.String(), Err: fmt.Errorf("response larger than egress.response.maxBodyBytes (%d)", eg.maxBody)}
	}
	body, err := readBody(resp.Body, resp.ContentLength, eg.maxBody)
	resp.Body.Close()
	if err != nil {
		return &backendError{err} // the partner broke off
	}
	if int64(len(body)) > eg.maxBody {
		return &egress.RejectedError{Reason: wss.ReasonMalformed.String(), Err: fmt.Errorf("response larger than egress.response.maxBodyBytes (%d)", eg.maxBody)}
	}
	start := time.Now()
	v, err := eg.client.Verify(resp.Request.Context(), req, body, time.Now())
	rt.metrics.Stage(metrics.StageVerify, time.Since(start))
	if err != nil {
		return err
	}
	eg.count(v)
	setResponseBody(resp, v.Plaintext)
	return nil
}

// verifyPackage reads an MTOM/SwA response, its attachments spooled
// (mime.*), verifies it (a trailing signature put back first) and relays
// the plaintext root with the remaining attachments, streamed from the
// spool.
func (eg *egressRoute) verifyPackage(rt *route, req *egress.Request, resp *http.Response) error {
	pkg, err := wmime.Read(resp.Request.Context(), resp.Body, resp.Header.Get("Content-Type"), eg.mime)
	resp.Body.Close()
	if err != nil {
		if packageFault(err) {
			return &egress.RejectedError{Reason: wss.ReasonMalformed.String(), Err: fmt.Errorf("multipart response: %w", err)}
		}
		return &backendError{err}
	}
	start := time.Now()
	v, err := eg.client.VerifyPackage(resp.Request.Context(), req, pkg, time.Now())
	rt.metrics.Stage(metrics.StageVerify, time.Since(start))
	if err != nil {
		_ = pkg.Close()
		return err
	}
	eg.count(v)
	ctype, w := pkg.Writer(v.Plaintext)
	resp.Body = newPackageBody(pkg, w) // Close removes the spool
	resp.ContentLength = -1
	resp.Header.Del("Content-Length")
	resp.Header.Set("Content-Type", ctype)
	return nil
}

func (eg *egressRoute) count(v *egress.Verdict) {
	if v.Fault {
		eg.results.Result(metrics.EgressPartnerFault)
		return
	}
	eg.results.Result(metrics.EgressVerified)
}

// setResponseBody makes data resp's body, with its length. data is read
// where it is: a string of it was one more copy of every verified egress
// response (issue 14 review).
func setResponseBody(resp *http.Response, data []byte) {
	resp.Body = io.NopCloser(bytes.NewReader(data))
	resp.ContentLength = int64(len(data))
	resp.Header.Set("Content-Length", strconv.Itoa(len(data)))
	resp.Header.Del("Transfer-Encoding")
}

// proxyError answers a partner response that failed verification with
// the uniform 502 fault (DESIGN.md §5.6: the reason is logged, never
// sent), and leaves every other failure to the proxy's usual hook.
func (eg *egressRoute) proxyError(w http.ResponseWriter, r *http.Request, err error) {
	var rej *egress.RejectedError
	e, ok := w.(*exchange)
	if !errors.As(err, &rej) || !ok {
		proxyError(w, r, err)
		if ok && (e.outcome == metrics.BackendUnavailable || e.outcome == metrics.BackendTimeout ||
			e.outcome == metrics.BackendStalled || e.outcome == metrics.BackendAborted || e.outcome == metrics.InternalError) {
			eg.results.Result(metrics.EgressPartnerError)
		}
		return
	}
	eg.results.Result(metrics.EgressRejected)
	// Who and why, for the operator who must call the partner; the
	// request line follows with the same id and outcome.
	eg.log.Warn("egress: partner response rejected", "id", e.id, "partner", eg.partner, "reason", rej.Reason, "error", rej.Err.Error())
	e.outcome, e.reason = metrics.SecurityRejected, err
	e.backendAt = time.Time{}
	h := e.Header()
	h.Set("Content-Type", e.version.ContentType())
	h.Set("Cache-Control", "no-store")
	fault := soap.Fault{Code: soap.Receiver, Reason: "The partner's response could not be verified", CorrelationID: e.id}
	b := fault.Append(nil, e.version)
	h.Set("Content-Length", strconv.Itoa(len(b)))
	e.WriteHeader(http.StatusBadGateway)
	_, _ = e.Write(b)
}
