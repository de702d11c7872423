package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/wssgw/wssgw/internal/budget"
	"github.com/wssgw/wssgw/internal/c14n"
	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/dom"
	"github.com/wssgw/wssgw/internal/metrics"
	wmime "github.com/wssgw/wssgw/internal/mime"
	"github.com/wssgw/wssgw/internal/soap"
	"github.com/wssgw/wssgw/internal/template"
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// security is a route's WS-Security stage: it verifies and decrypts the
// request and turns it into the plaintext the backend gets.
type security struct {
	policy   *wss.Policy
	engine   wss.Engine
	metrics  *metrics.PolicyMetrics
	identity config.IdentityHeaders
	now      func() time.Time
	mime     wmime.Limits // MTOM/SwA packages (mtom.go)
	log      *slog.Logger
	gate     *gate // what the policy forwards unparsed (gate.go)
	// hits is told of every template hit: while they flow, the DOM
	// engine is held to server.memory.domShare (internal/budget).
	hits hitObserver
}

// hitObserver is the memory budget's view of template hits.
type hitObserver interface{ NoteHit() }

// securityError is a rejected request: one uniform fault for all of them
// unless the policy asks for detailed WS-Security fault codes.
type securityError struct {
	err      *wss.Error
	detailed bool
}

func (e *securityError) Error() string { return e.err.Error() }
func (e *securityError) Unwrap() error { return e.err }

// fault returns the WSS 1.1 §12 fault code and its reason text.
func (e *securityError) fault() (string, string) {
	code := "InvalidSecurity"
	if e.detailed {
		code = e.err.Reason.FaultCode()
	}
	return code, wssFaultStrings[code]
}

// wssFaultStrings are the fault strings of WSS 1.1 §12, table 12-1/12-2.
var wssFaultStrings = map[string]string{
	"InvalidSecurity":      "An error was discovered processing the <wsse:Security> header",
	"UnsupportedAlgorithm": "An unsupported signature or encryption algorithm was used",
	"InvalidSecurityToken": "An invalid security token was provided",
	"FailedAuthentication": "The security token could not be authenticated or authorized",
	"FailedCheck":          "The signature or decryption was invalid",
	"MessageExpired":       "The message has expired",
}

// wsseCode is the subcode QName of a WS-Security fault.
func wsseCode(local string) *soap.QName {
	return &soap.QName{Prefix: "wsse", Local: local, Space: xmlscan.NamespaceWSSE}
}

// secure reads the whole body, verifies it and returns the bytes to forward
// and the verified facts (nil when the message was forwarded unparsed) for
// the identity headers (identity.go) and the response. A rejected message
// may come with the engine's partial result (its template lookup), for the
// log line; only an accepted one's facts are verified.
func (s *security) secure(ctx context.Context, r *http.Request, body io.Reader, rm *metrics.RouteMetrics, kind soap.Kind, v soap.Version) ([]byte, *wss.Result, error) {
	if kind == soap.Multipart {
		// The package replaces r.Body itself: it is streamed, not bytes.
		res, err := s.secureMultipart(ctx, r, body, rm, v)
		return nil, res, err
	}
	data, err := readRequest(body, r.ContentLength)
	if err != nil {
		return nil, nil, err
	}
	// data was read for this request alone: the forwarded bytes are
	// data itself, the Security header cut in place (issue 14).
	res, out, err := s.policy.VerifyOwned(ctx, s.engine, data, s.now())
	if errors.Is(err, budget.ErrOverloaded) {
		// No verdict on the message: no DOM worker was free (overload.go).
		return nil, res, err
	}
	s.observe(rm, res)
	if err != nil {
		return nil, res, s.reject(err)
	}
	if err := s.checkForwarded(res, data, v, rm); err != nil {
		return nil, res, err
	}
	return out, res, nil
}

// observe records the stage times and the template lookup of a verified
// message. A rejected one may come with a result that holds only the
// lookup (an engine error): its stages are not observed.
func (s *security) observe(rm *metrics.RouteMetrics, res *wss.Result) {
	if res == nil {
		return // forwarded unparsed (a policy requiring nothing)
	}
	lookup := res.Lookup
	if lookup == "" {
		lookup = metrics.LookupDisabled
	} else {
		rm.Stage(metrics.StageMatch, res.MatchTime)
	}
	rm.Lookup(lookup)
	if lookup == metrics.LookupHit && s.hits != nil {
		s.hits.NoteHit()
	}
	if res.Document == nil {
		return
	}
	rm.Stage(metrics.StageGate, res.GateTime)
	rm.Stage(metrics.StageDecrypt, res.DecryptTime)
	rm.Stage(metrics.StageVerify, res.ProcessTime-res.GateTime-res.DecryptTime-res.MatchTime)
	rm.Stage(metrics.StagePolicy, res.PolicyTime)
	rm.Engine(engineOf(res), res.ProcessTime)
	s.count(res)
}

func (s *security) reject(err error) error {
	var we *wss.Error
	if !errors.As(err, &we) {
		we = wss.Wrap(wss.ReasonMalformed, err, "gateway")
	}
	s.metrics.Failure(we.Reason.String())
	return &securityError{err: we, detailed: s.policy.Config.DetailedFaults}
}

// count records the algorithms the partner used, as closed-set labels,
// the legacy ones once per message with the signer that used them, and the
// unsigned content the policy left out.
func (s *security) count(res *wss.Result) {
	var legacy []string // nil, without allocating, for a modern message
	for _, u := range res.Algorithms {
		s.metrics.Use(u.Kind, algorithmLabel(u.Kind, u.Value))
		if l := legacyLabel(u.Kind, u.Value); l != "" && !slices.Contains(legacy, l) {
			legacy = append(legacy, l)
		}
	}
	if legacy != nil {
		subject := ""
		if id := res.Signer(); id != nil {
			subject = id.Subject // a certificate the trust store accepted
		}
		for _, l := range legacy {
			s.metrics.Legacy(l, subject)
		}
	}
	s.stripped(res)
}

// legacyKeyLabel is the legacy label of a signer's RSA key under 2048 bits
// (NIST SP 800-131A: disallowed for signing since 2014).
const legacyKeyLabel = "rsa-under-2048"

// legacyLabels are the label values of wssgw_legacy_algorithm_messages_total.
func legacyLabels() []string { return append(crypto.LegacyLabels(), legacyKeyLabel) }

// legacyLabel is the legacy label of one algorithm use, or "" when the use
// is not legacy. Key sizes come from certificate keys only
// (dom/signature.go): over 521 bits (P-521) they are RSA moduli.
func legacyLabel(kind, value string) string {
	switch kind {
	case wss.UseSignature, wss.UseDigest, wss.UseKeyTransport, wss.UseData:
		if crypto.Legacy(value) {
			return crypto.AlgorithmLabel(value)
		}
	case wss.UseKeySize:
		if bits, err := strconv.Atoi(value); err == nil && bits > 521 && bits < 2048 {
			return legacyKeyLabel
		}
	}
	return ""
}

// maxLoggedNames bounds the QNames one debug line lists.
const maxLoggedNames = 16

// stripped counts, per kind, the header blocks, attributes and comments
// that no trusted signature covered and Verify left out of the forwarded
// envelope (wss.Result.Forward), and logs their names at debug: an
// operator deciding on unsignedAllow sees what partners send unsigned.
func (s *security) stripped(res *wss.Result) {
	if len(res.Stripped) == 0 {
		return
	}
	var names []string
	for _, kind := range []string{wss.UnsignedHeader, wss.UnsignedAttribute, wss.UnsignedComment} {
		n := 0
		for _, u := range res.Stripped {
			if u.Kind != kind {
				continue
			}
			n++
			if kind != wss.UnsignedComment && len(names) < maxLoggedNames {
				names = append(names, kind+" {"+u.Name.Space+"}"+u.Name.Local)
			}
		}
		if n > 0 {
			s.metrics.Stripped(kind, n)
		}
	}
	s.log.Debug("unsigned content not forwarded", "policy", s.policy.Name, "count", len(res.Stripped), "names", names)
}

func algorithmLabel(kind, value string) string {
	switch kind {
	case wss.UseKeyReference:
		return value // wss.KeyRef*: a closed set
	case wss.UseKeySize:
		switch value {
		case "128", "192", "256", "384", "521", "1024", "2048", "3072", "4096", "8192":
			return value
		}
		return "other"
	case wss.UseC14N:
		if l, ok := c14nLabels[value]; ok {
			return l
		}
		return "other"
	}
	return crypto.AlgorithmLabel(value)
}

var c14nLabels = map[string]string{
	c14n.AlgExcC14N: "exc-c14n", c14n.AlgExcC14NWithComments: "exc-c14n-with-comments",
	c14n.AlgC14N10: "c14n", c14n.AlgC14N10WithComments: "c14n-with-comments",
	c14n.AlgC14N11: "c14n11", c14n.AlgC14N11WithComments: "c14n11-with-comments",
	xmlscan.TransformSTR: "str-transform",
}

// newSecurity builds the security stage of a route whose policy is not none.
func newSecurity(rc config.Route, p *wss.Policy, pm *metrics.PolicyMetrics, limits config.XMLLimits, mimeLimits config.MIMELimits, ts *template.Store, log *slog.Logger, workers *budget.Budget) (*security, error) {
	sc := requestGateConfig(rc, limits)
	d, err := dom.New(sc)
	if err != nil {
		return nil, fmt.Errorf("gateway: route %s: %w", rc.Name, err)
	}
	d.LimitWorkers(workers)
	var e wss.Engine = d
	if ts != nil {
		// Routes of one policy share its templates; each matches with its
		// own gate limits.
		te, err := template.New(d, sc, ts, log.With("route", rc.Name))
		if err != nil {
			return nil, fmt.Errorf("gateway: route %s: %w", rc.Name, err)
		}
		if workers != nil {
			// A shape never accepted before waits for its claimed
			// signer's first-sight lane (template/firstsight.go).
			te.LimitFirstSight(workers)
		}
		e = te
	}
	return &security{policy: p, engine: e, metrics: pm, identity: rc.IdentityHeaders, now: time.Now, mime: mimeLimits.Limits(),
		log: log.With("route", rc.Name), hits: workers}, nil
}
