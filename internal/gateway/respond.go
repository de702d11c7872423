package gateway

import (
	"bytes"
	"context"
	"crypto/rsa"
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
	"github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/metrics"
	wmime "github.com/wssgw/wssgw/internal/mime"
	"github.com/wssgw/wssgw/internal/reload"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/soap"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// responder signs the backend's responses on the routes of one policy
// (DESIGN.md §2, outbound): buffered with a standard WS-Security header, or
// streamed for MTOM/SwA packages (§6).
type responder struct {
	cfg     config.Responses
	key     *reload.Reloader[crypto.KeyPair]
	gate    *xmlscan.Scanner
	mime    wmime.Limits // bounds buffered MTOM responses
	log     *slog.Logger
	metrics *metrics.Metrics
	// results are the response-signing handles of each attached route,
	// by name; attach fills it before the gateway serves.
	results map[string]*metrics.ResponseMetrics
}

// responseError is a response the gateway would not relay: it could not be
// signed. The partner gets a 502 fault instead of an unsigned answer.
type responseError struct{ err error }

func (e *responseError) Error() string { return "gateway: response not signed: " + e.err.Error() }
func (e *responseError) Unwrap() error { return e.err }

var (
	errResponseTooLarge   = errors.New("larger than responses.maxBufferedSize")
	errResponseType       = errors.New("not a SOAP response")
	errResponseEncoding   = errors.New("Content-Encoding cannot be signed")
	errLongerThanDeclared = errors.New("body longer than its Content-Length")
)

// newResponder loads the signing key of a policy and keeps it fresh until
// ctx ends (Secret rotation).
func newResponder(ctx context.Context, policy string, cfg config.Responses, limits config.XMLLimits, mimeLimits config.MIMELimits, m *metrics.Metrics, log *slog.Logger) (*responder, error) {
	gate, err := responseGate(cfg, limits)
	if err != nil {
		return nil, fmt.Errorf("gateway: policy %s: %w", policy, err)
	}
	ro := reload.Options{Logger: log, Observer: m.KeyReloadObserver(metrics.KeyKindSigning)}
	key, err := reload.NewKeySource("policies."+policy+".responses", cfg.KeyOptions(), ro)
	if err != nil {
		return nil, fmt.Errorf("gateway: policy %s: %w", policy, err)
	}
	go key.Run(ctx)
	// The gateway that built the responder ends ctx when it closes (after
	// a reload): its signing certificate is then no longer exported.
	context.AfterFunc(ctx, m.WatchCertificates(func(yield func(string, *x509.Certificate)) {
		if k := key.Current(); k != nil && k.Certificate != nil {
			yield(metrics.UseSigning, k.Certificate)
		}
	}))
	return &responder{cfg: cfg, key: key, gate: gate, mime: mimeLimits.Limits(), log: log, metrics: m, results: map[string]*metrics.ResponseMetrics{}}, nil
}

// responseGate is the strict gate for responses: the configured XML limits,
// with bytes, text and base64 bounded by maxBufferedSize instead of the
// request limits, since one base64 payload may fill a response. The
// response comes from the route's own backend, but it is still parsed
// only after passing the gate (DESIGN.md §5.1).
func responseGate(cfg config.Responses, limits config.XMLLimits) (*xmlscan.Scanner, error) {
	sc := xmlscan.DefaultConfig()
	// The envelope rule (issue 13) keeps unverified request content from
	// backends; a response is the route's own backend's, which SOAP 1.2
	// Part 1 §5 lets put comments in its Envelope: refusing them would turn
	// a harmless response into a 502.
	sc.ElementOnly = nil
	sc.Limits = limits.Limits(cfg.MaxBufferedSize)
	sc.Limits.MaxTextLen = max(sc.Limits.MaxTextLen, int(cfg.MaxBufferedSize))
	sc.Limits.MaxBase64Len = max(sc.Limits.MaxBase64Len, int(cfg.MaxBufferedSize))
	return xmlscan.NewScanner(sc)
}

// attachResponder makes route r sign its responses when its policy says
// so; routes of one policy share its responder and signing key.
func attachResponder(ctx context.Context, r *route, policy string, cfg config.Responses, limits config.XMLLimits, mimeLimits config.MIMELimits, cache map[string]*responder, m *metrics.Metrics, log *slog.Logger) error {
	if !cfg.Sign {
		return nil
	}
	rs, ok := cache[policy]
	if !ok {
		var err error
		if rs, err = newResponder(ctx, policy, cfg, limits, mimeLimits, m, log); err != nil {
			return err
		}
		cache[policy] = rs
	}
	rs.attach(r)
	return nil
}

// attach makes rt's proxy sign what its backend answers.
func (rs *responder) attach(rt *route) {
	rt.proxy.ModifyResponse = func(resp *http.Response) error { return rs.modify(rt, resp) }
	rt.proxy.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) { rs.proxyError(rt, w, r, err) }
	if rs.cfg.Mode == config.ResponseStreaming {
		rt.proxy.BufferPool = streamBufferPool
	}
	rt.responder = rs
	rs.results[rt.name] = rs.metrics.Responses(rt.name)
}

// count records how a response on rt ended (metrics.ResponseResults).
func (rs *responder) count(rt *route, result string) { rs.results[rt.name].Result(result) }

// modify signs one response before the proxy relays it. SOAP faults are
// signed like any answer, whatever the HTTP status: a partner must be able
// to trust a fault as much as a result.
func (rs *responder) modify(rt *route, resp *http.Response) error {
	if ce := resp.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		resp.Body.Close()
		return rs.failed(rt, &responseError{fmt.Errorf("%w: %q", errResponseEncoding, ce)})
	}
	kind, _ := soap.Classify(resp.Header.Get("Content-Type"))
	switch {
	case kind == soap.Multipart && rs.cfg.Mode == config.ResponseStreaming:
		if f := rs.streamFormat(requesterOf(resp.Request)); f != config.StreamAuto {
			return rs.stream(rt, resp, f == config.StreamStrictXOP)
		}
		// auto without a requester to encrypt for: no standard
		// streaming form exists, so the package gets buffered mode's
		// standard header (docs/decisions.md, issue 15).
		rs.log.Debug("no RSA requester certificate: streamed package signed buffered", "id", resp.Request.Header.Get(HeaderRequestID), "route", rt.name)
		return rs.bufferedPackage(rt, resp)
	case kind == soap.Multipart:
		return rs.bufferedPackage(rt, resp)
	case kind == soap.Envelope:
		return rs.buffered(rt, resp)
	case resp.ContentLength == 0 || resp.StatusCode == http.StatusNoContent:
		// A one-way operation's empty 202 carries nothing to sign.
		rs.count(rt, metrics.ResponsePassed)
		return nil
	}
	resp.Body.Close()
	return rs.failed(rt, &responseError{fmt.Errorf("%w: %s", errResponseType, resp.Header.Get("Content-Type"))})
}

// buffered reads the whole response (bounded), signs it and replaces it.
func (rs *responder) buffered(rt *route, resp *http.Response) error {
	limit := int64(rs.cfg.MaxBufferedSize)
	if resp.ContentLength > limit {
		resp.Body.Close()
		return rs.failed(rt, &responseError{errResponseTooLarge})
	}
	body, err := readBody(resp.Body, resp.ContentLength, limit)
	resp.Body.Close()
	if err != nil {
		// The backend broke off: the partner gets the proxy's 502.
		return &backendError{err}
	}
	if int64(len(body)) > limit {
		return rs.failed(rt, &responseError{errResponseTooLarge})
	}
	if len(bytes.TrimSpace(body)) == 0 {
		rs.count(rt, metrics.ResponsePassed)
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return nil
	}
	// An explicit strictXOP encrypts the Body of the route's plain SOAP
	// responses as well, as it always has.
	o, err := rs.options(requesterOf(resp.Request), rs.cfg.EncryptForRequester || rs.cfg.Format() == config.StreamStrictXOP)
	if err != nil {
		return rs.failed(rt, &responseError{err})
	}
	start := time.Now()
	out, err := signer.Secure(body, o)
	rt.metrics.Stage(metrics.StageSign, time.Since(start))
	if err != nil {
		return rs.failed(rt, &responseError{err})
	}
	rs.count(rt, metrics.ResponseSigned)
	resp.Body = io.NopCloser(bytes.NewReader(out))
	resp.ContentLength = int64(len(out))
	resp.Header.Set("Content-Length", strconv.Itoa(len(out)))
	resp.Header.Del("Transfer-Encoding")
	return nil
}

// readBody reads at most limit+1 bytes of a response. A known length
// (the transport holds the body to it) is read into one buffer of that
// size: io.ReadAll, and bytes.Buffer too, grow by doubling, which holds
// up to twice a large response and clears and copies it on the way.
func readBody(r io.Reader, contentLength, limit int64) ([]byte, error) {
	if contentLength < 0 || contentLength > limit {
		return io.ReadAll(io.LimitReader(r, limit+1))
	}
	buf := make([]byte, contentLength+1) // +1: room to see the end
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err == io.EOF {
			return buf[:n], nil
		}
		if err != nil {
			return buf[:n], err
		}
	}
	return buf[:n], errLongerThanDeclared
}

// streamFormat is how a multipart response on a streaming route goes
// out: strict-xop, trailing, or auto for buffered mode's standard header.
// auto streams strict-xop when the request's verified signer has an RSA
// key to encrypt the signature for (RSA-OAEP is the key transport).
func (rs *responder) streamFormat(req *requester) string {
	f := rs.cfg.Format()
	if f != config.StreamAuto {
		return f
	}
	if c := req.certificate(); c != nil {
		if _, ok := c.PublicKey.(*rsa.PublicKey); ok {
			return config.StreamStrictXOP
		}
	}
	return config.StreamAuto
}

// options are the signer's options for one response; encrypt asks for
// the requester's certificate as the recipient.
func (rs *responder) options(req *requester, encrypt bool) (signer.Options, error) {
	k := rs.key.Current()
	if k == nil {
		return signer.Options{}, errors.New("no signing key loaded")
	}
	o := signer.DefaultOptions()
	o.Signer, o.Certificate, o.Chain = k.Signer, k.Certificate, k.Chain
	o.KeyReference = rs.cfg.KeyReference
	o.TTL = rs.cfg.TimestampTTL
	o.Gate = rs.gate
	if rs.cfg.SignatureConfirmation {
		o.SignatureConfirmation, o.Confirm = true, req.signatureValues()
	}
	if encrypt {
		c := req.certificate()
		if c == nil {
			return o, errors.New("the request has no trusted X.509 signer to encrypt for")
		}
		o.EncryptFor = c
	}
	return o, nil
}

// failed counts and returns a response that could not be signed.
func (rs *responder) failed(rt *route, err error) error {
	rs.count(rt, metrics.ResponseFailed)
	return err
}

// proxyError answers a response that could not be signed with a 502
// fault (the backend's answer is unusable, not the gateway broken), and
// leaves every other failure to the proxy's usual hook. A backend that
// could not be reached, timed out or broke off is counted as
// backend_error: the partner gets the gateway's own unsigned fault, which
// must not pass for a signed response (nor for a signing failure: the
// responder never had an answer to sign).
func (rs *responder) proxyError(rt *route, w http.ResponseWriter, r *http.Request, err error) {
	var re *responseError
	e, ok := w.(*exchange)
	if !errors.As(err, &re) || !ok {
		proxyError(w, r, err)
		if ok && (e.outcome == metrics.BackendUnavailable || e.outcome == metrics.BackendTimeout || e.outcome == metrics.BackendStalled) {
			rs.count(rt, metrics.ResponseBackendError)
		}
		return
	}
	// The backend answered, but not with something the partner may get:
	// outcome response_signing_failed (not backend_fault, which is the
	// backend's own 5xx), the reason in the log line.
	e.outcome, e.reason = metrics.ResponseSigningFailed, err
	e.backendAt = time.Time{}
	h := e.Header()
	h.Set("Content-Type", e.version.ContentType())
	h.Set("Cache-Control", "no-store")
	fault := soap.Fault{Code: soap.Receiver, Reason: "The service's response could not be secured", CorrelationID: e.id}
	b := fault.Append(nil, e.version)
	h.Set("Content-Length", strconv.Itoa(len(b)))
	e.WriteHeader(http.StatusBadGateway)
	_, _ = e.Write(b)
}
