package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/wssgw/wssgw/internal/budget"
	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/metrics"
	wmime "github.com/wssgw/wssgw/internal/mime"
	"github.com/wssgw/wssgw/internal/soap"
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// gate is a route's strict XML gate for what no engine parses (issue 13):
// every request on a policy-none route, and what a policy that requires
// nothing forwards unparsed (wss.Policy.Verify without WS-Security). The
// backend behind a pass-through route parses XML too, often with DTDs and
// external entities on, so it gets only what the gate accepts: no DTD, no
// entity, within the route's limits, only white space directly in the
// Envelope and Header, UTF-8 by label and by bytes, and an Envelope of the
// SOAP version the Content-Type announces. Secured routes do not gate
// twice: the DOM engine gates what it parses and the template path only
// matches shapes the DOM engine accepted.
//
// Every route has one unless it sets unsafeSkipGate (policy none only),
// which keeps the old streaming pass-through.
type gate struct {
	scanner *xmlscan.Scanner
	mime    wmime.Limits // MTOM/SwA packages: the root part is gated
}

// gateDocs pools the gate's Documents across routes: a Document does not
// depend on the configuration that filled it.
var gateDocs = sync.Pool{New: func() any { return new(xmlscan.Document) }}

// requestGateConfig is the gate configuration of a route's requests, the
// same for its gate and its engines: xmlscan's defaults (the Security
// header and the envelope rules) with the configured limits, bytes bounded
// by the route's body limit.
func requestGateConfig(rc config.Route, limits config.XMLLimits) xmlscan.Config {
	sc := xmlscan.DefaultConfig()
	sc.Limits = limits.Limits(rc.MaxBodyBytes)
	return sc
}

// attachGate gives r its gate unless the route opted out; a secured route
// uses it for the messages its policy forwards unparsed.
func (r *route) attachGate(rc config.Route, limits config.XMLLimits, mimeLimits config.MIMELimits) error {
	if rc.UnsafeSkipGate {
		return nil
	}
	s, err := xmlscan.NewScanner(requestGateConfig(rc, limits))
	if err != nil {
		return fmt.Errorf("gateway: route %s: %w", rc.Name, err)
	}
	r.gate = &gate{scanner: s, mime: mimeLimits.Limits()}
	if r.security != nil {
		r.security.gate = r.gate
	}
	return nil
}

// Errors of the gate. classify maps them.
type (
	// malformedError is a message the gate refused on a policy-none route.
	// On a secured route the same refusal is the uniform security fault.
	malformedError struct{ err error }
	// versionError is an Envelope whose namespace is not that of the SOAP
	// version the Content-Type announced.
	versionError struct {
		space     string
		announced soap.Version
	}
)

func (e *malformedError) Error() string { return "gateway: malformed SOAP message: " + e.err.Error() }
func (e *malformedError) Unwrap() error { return e.err }
func (e *versionError) Error() string {
	return fmt.Sprintf("gateway: envelope namespace %q under a SOAP %s Content-Type", e.space, e.announced)
}

// admit applies the one-charset rule to a plain envelope's Content-Type
// before its body is read (the root part of a package is checked in
// readPackage).
func (g *gate) admit(r *http.Request, kind soap.Kind) error {
	if kind != soap.Envelope {
		return nil
	}
	return soap.CheckCharset(r.Header.Get("Content-Type"))
}

// pass reads, gates and re-attaches the body of a request on a policy-none
// route: the backend gets the gated bytes, never a second read of the
// client.
func (g *gate) pass(ctx context.Context, r *http.Request, body io.Reader, kind soap.Kind, v soap.Version, rm *metrics.RouteMetrics) error {
	if kind == soap.Multipart {
		return g.passPackage(ctx, r, body, v, rm)
	}
	data, err := readRequest(body, r.ContentLength)
	if err != nil {
		return err
	}
	if err := g.check(data, v, rm); err != nil {
		return err
	}
	setBody(r, data)
	return nil
}

// passPackage gates the root part of an MTOM/SwA package on a policy-none
// route and forwards the package re-assembled, as a secured route does.
func (g *gate) passPackage(ctx context.Context, r *http.Request, body io.Reader, v soap.Version, rm *metrics.RouteMetrics) error {
	pkg, err := readPackage(ctx, r, body, g.mime)
	var bad *badPackageError
	if errors.As(err, &bad) {
		return &malformedError{err}
	}
	if err != nil {
		return err
	}
	if err := g.check(pkg.RootBytes, rootVersion(pkg, v), rm); err != nil {
		_ = pkg.Close()
		return err
	}
	sendPackage(r, pkg, pkg.RootBytes)
	return nil
}

// check gates data and matches its Envelope with the announced version.
func (g *gate) check(data []byte, v soap.Version, rm *metrics.RouteMetrics) error {
	start := time.Now()
	d := gateDocs.Get().(*xmlscan.Document)
	defer func() {
		d.Reset() // drops the hold on this message's bytes
		gateDocs.Put(d)
	}()
	err := g.scanner.Scan(data, d)
	rm.Stage(metrics.StageGate, time.Since(start))
	if err != nil {
		return &malformedError{err}
	}
	root := d.Root()
	if root.Local != "Envelope" {
		return &malformedError{errors.New("the root element is not a SOAP Envelope")}
	}
	return matchVersion(root.Space, v)
}

// matchVersion is the version rule: the Envelope's namespace must be the
// one of the SOAP version the Content-Type announced (text/xml: SOAP 1.1,
// application/soap+xml: SOAP 1.2; a package by its type and start-info).
// Anything else is a VersionMismatch (SOAP 1.1 §4.4.1, SOAP 1.2 Part 1
// §5.4.7), never forwarded: a backend that dispatches on the label would
// read the envelope under the other version's rules.
func matchVersion(space string, announced soap.Version) error {
	want := soap.NS11
	if announced == soap.V12 {
		want = soap.NS12
	}
	if space != want {
		return &versionError{space: space, announced: announced}
	}
	return nil
}

// versionSpace is the envelope namespace of a version an engine reported.
func versionSpace(v soap.Version) string {
	if v == soap.V12 {
		return soap.NS12
	}
	return soap.NS11
}

// checkForwarded applies the gate's rules to what a secured route's policy
// let through: a message forwarded unparsed is gated (its refusal is the
// route's uniform security fault), a verified one must be of the announced
// version.
func (s *security) checkForwarded(res *wss.Result, data []byte, v soap.Version, rm *metrics.RouteMetrics) error {
	if res != nil {
		return matchVersion(versionSpace(res.Version), v)
	}
	if s.gate == nil { // attachGate gives every secured route one
		return errors.New("gateway: secured route without a gate")
	}
	err := s.gate.check(data, v, rm)
	var bad *malformedError
	if errors.As(err, &bad) {
		return s.reject(wss.Wrap(wss.ReasonMalformed, bad.err, "gate"))
	}
	return err
}

// readRequest reads a whole request body, sized by its declared length when
// there is one (admit has bounded it), and blames a failed read on the
// client unless the body was over the route's limit.
func readRequest(body io.Reader, size int64) ([]byte, error) {
	// One byte more than declared, so that EOF is read without growing.
	b := make([]byte, 0, max(size, 511)+1)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := body.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		switch {
		case err == io.EOF:
			return b, nil
		case err != nil:
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) || errors.Is(err, budget.ErrOverloaded) {
				return nil, err
			}
			return nil, &clientBodyError{err}
		}
	}
}
