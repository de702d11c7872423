package template

import (
	"crypto/x509"
	"errors"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/wssgw/wssgw/internal/budget"
	"github.com/wssgw/wssgw/internal/dom"
	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// The gateway picks an engine as a wss.Engine and finds its MTOM/SwA entry
// point by a type assertion (gateway/mtom.go); these guards make a missing
// or changed method a compile error here instead of a package refused at
// run time.
var (
	_ wss.Engine           = (*Engine)(nil)
	_ wss.AttachmentEngine = (*Engine)(nil)
)

// Engine is the template automaton in front of the DOM engine for one set
// of gate limits: a wss.Engine. Hits are verified on the template path;
// misses go to the DOM engine, whose accepted messages teach the store.
type Engine struct {
	dom     *dom.Engine
	scanner *xmlscan.Scanner
	limits  xmlscan.Limits
	store   *Store
	log     *slog.Logger
	certs   certCache
	runs    sync.Pool
	only    []xmlscan.Name // the gate's ElementOnly elements (fast body)
	// firstSight paces misses of shapes never accepted (firstsight.go);
	// nil: no lanes.
	firstSight FirstSight
}

// New returns an engine with the store's templates in front of d, gating
// with cfg (the same configuration as d's). log may be nil.
func New(d *dom.Engine, cfg xmlscan.Config, s *Store, log *slog.Logger) (*Engine, error) {
	sc, err := xmlscan.NewScanner(cfg)
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	e := &Engine{dom: d, scanner: sc, limits: sc.Limits(), store: s, log: log, only: slices.Clone(cfg.ElementOnly)}
	e.runs.New = func() any { return &run{} }
	return e, nil
}

// Store is the engine's template store.
func (e *Engine) Store() *Store { return e.store }

// genericShadowHits is how many first hits of a template with a generic
// Body are re-verified by the DOM engine, whatever the shadow rate: a
// template learned from one message is trusted for every payload only
// after the DOM engine agreed on several different ones (issue 14, "learn
// from several messages before trusting a generalization"). Agreement is
// what the construction guarantees (generic.go); the shadow makes a
// mistake in it a rejected message and an error log, not a wrong verdict.
const genericShadowHits = 8

// maxVisits bounds backtracking per slot of input.
const maxVisits = 64

// Process verifies data on the template path when a template matches, else
// on the DOM engine (learning from it when it accepts).
func (e *Engine) Process(data []byte, p *wss.Policy, now time.Time) (*wss.Result, error) {
	return e.process(data, nil, p, now)
}

// process is Process, for the root part data of an MTOM package whose
// other parts are atts when atts is not nil (xop.go).
func (e *Engine) process(data []byte, atts wss.Attachments, p *wss.Policy, now time.Time) (*wss.Result, error) {
	if !e.applies(data, p) {
		res, err := e.unlearned(data, atts, p, now)
		if res != nil {
			res.Lookup = metrics.LookupDisabled
		} else if atts != nil {
			// As in slow: a rejected package's lookup is counted.
			res = &wss.Result{Lookup: metrics.LookupDisabled}
		}
		return res, err
	}
	start := time.Now()
	root := e.store.root.Load()
	if root == nil || len(data) > e.limits.MaxBytes {
		return e.slow(data, atts, p, now, metrics.LookupNoTemplate, 0)
	}
	r := e.runs.Get().(*run)
	defer e.put(r)
	mt := matcher{data: data, caps: r.caps[:0], budget: maxVisits * (len(data)/64 + 16), limits: &e.limits}
	t := mt.walk(root, 0)
	r.caps = mt.caps
	match := time.Since(start)
	if t == nil {
		why := metrics.LookupNoTemplate
		if mt.rejects {
			why = metrics.LookupRejected
		}
		return e.slow(data, atts, p, now, why, match)
	}
	r.t, r.data, r.p, r.now, r.e, r.atts = t, data, p, now.UTC(), e, atts
	res, err := r.exec()
	if err != nil && isFallback(err) {
		return e.slow(data, atts, p, now, metrics.LookupRejected, match)
	}
	t.hits.Add(1)
	t.lastHit.Store(start.UnixNano())
	must := t.gbody != nil && t.checked.Load() < genericShadowHits
	if must || e.store.opts.ShadowRate > 0 && rand.Float64() < e.store.opts.ShadowRate {
		if serr := e.shadow(t, data, atts, p, now, res, err, must); serr != nil {
			res, err = nil, serr
		}
	}
	if err != nil {
		// No facts, only how the engine got there (for the metrics).
		res = &wss.Result{}
	}
	res.Lookup, res.MatchTime, res.ProcessTime = metrics.LookupHit, match, time.Since(start)
	return res, err
}

// unlearned runs the DOM engine on a message the template path is not for.
// One larger than templates.maxMessageBytes under the store's policy is
// never learned but is a miss all the same: it takes the first-sight
// lanes, or padding a fresh shape past the bound would dodge them; once
// accepted, its shape is no first sight.
func (e *Engine) unlearned(data []byte, atts wss.Attachments, p *wss.Policy, now time.Time) (*wss.Result, error) {
	if e.store == nil || p != e.store.policy {
		return e.domRun(data, atts, p, now)
	}
	sg, res, err := e.missRun(data, atts, p, now)
	if err == nil && sg.ok && p.CheckFacts(res) == nil {
		e.accepted(sg, res)
		e.store.seen.mark(sg.key)
	}
	return res, err
}

// isFallback reports whether err is a fallback. Its own function: the
// target errors.As needs escapes, and a hit without an error should not
// pay its allocation.
func isFallback(err error) bool {
	var fb *fallback
	return errors.As(err, &fb)
}

// domRun is the DOM engine on a plain message or a package.
func (e *Engine) domRun(data []byte, atts wss.Attachments, p *wss.Policy, now time.Time) (*wss.Result, error) {
	if atts != nil {
		return e.dom.ProcessAttachments(data, atts, p, now)
	}
	return e.dom.Process(data, p, now)
}

// applies reports whether the template path is for data under policy p:
// templates on for p, and data within the store's MaxMessageBytes.
func (e *Engine) applies(data []byte, p *wss.Policy) bool {
	if e.store == nil || p != e.store.policy {
		return false
	}
	limit := e.store.opts.MaxMessageBytes
	return limit <= 0 || len(data) <= limit
}

func (e *Engine) put(r *run) {
	if r.scanned { // a fast body hit never gates into doc: nothing to reset
		r.doc.Reset()
	}
	r.fb.data, r.fb.h = nil, nil
	// Field by field: a run is 1.5 KB, most of it the gate's and the
	// fast body's scratch kept for the next hit, and assigning a whole
	// new run copied that twice per hit (issue 14). TestPutResets holds
	// every field not kept (keptRunFields) to zero.
	r.t, r.top, r.data, r.p, r.res, r.blk, r.e, r.atts, r.ciphered = nil, nil, nil, nil, nil, nil, nil, nil, nil
	r.now, r.shared, r.scanned, r.fast = time.Time{}, false, false, false
	r.caps, r.buf, r.norm, r.tmp, r.part, r.dv, r.bodySum = r.caps[:0], r.buf[:0], r.norm[:0], r.tmp[:0], r.part[:0], r.dv[:0], r.bodySum[:0]
	r.cids, r.flipped, r.bodyInc, r.swaCIDs = r.cids[:0], r.flipped[:0], r.bodyInc[:0], r.swaCIDs[:0]
	e.runs.Put(r)
}

// slow runs the DOM engine and learns from an accepted message. With
// first-sight lanes (firstsight.go) a message of a shape never accepted
// enters its lane first, and a refused one never reaches the DOM engine.
func (e *Engine) slow(data []byte, atts wss.Attachments, p *wss.Policy, now time.Time, lookup string, match time.Duration) (*wss.Result, error) {
	sg, res, err := e.missRun(data, atts, p, now)
	if err != nil {
		return &wss.Result{Lookup: lookup, MatchTime: match}, err
	}
	// The engine's whole time includes the failed match.
	res.Lookup, res.MatchTime, res.ProcessTime = lookup, match, res.ProcessTime+match
	if atts != nil && learnablePackage(res) != nil {
		// A package no template describes (xop.go): not a miss. Its
		// shape is still a sighting, so that the partner's next package
		// of it is no first sight.
		if sg.ok && p.CheckFacts(res) == nil {
			e.accepted(sg, res)
			e.store.seen.mark(sg.key)
		}
		res.Lookup = metrics.LookupNotApplicable
		return res, nil
	}
	if p.CheckFacts(res) == nil {
		e.accepted(sg, res)
		e.learn(data, atts, res, p, now, sg)
	}
	return res, nil
}

// missRun is domRun for a message no template describes. With lanes, the
// pre-DOM walk finds its shape and claim (sg), and the message enters its
// lane first; a refusal is err (a *budget.OverloadError the gateway
// answers 503) and the DOM engine does not run.
func (e *Engine) missRun(data []byte, atts wss.Attachments, p *wss.Policy, now time.Time) (sg sight, res *wss.Result, err error) {
	if !e.lanes() || len(data) > e.limits.MaxBytes {
		// Past MaxBytes the gate refuses the message before any work:
		// nothing to walk or pace (BenchmarkLaneWalkCost).
		res, err = e.domRun(data, atts, p, now)
		return sg, res, err
	}
	sg.key, sg.signer, sg.token = walkSight(data, atts != nil, &e.limits)
	sg.ok = true
	leave, err := e.enter(sg)
	if err != nil {
		return sg, nil, err
	}
	res, err = e.domRunIn(leave, data, atts, p, now)
	return sg, res, err
}

// learn adds the message's template, once its shape was seen
// LearnAfter times (sighting.go) and within the learning rate. sg is the
// pre-DOM walk's result when it ran (its key is the shape key).
func (e *Engine) learn(data []byte, atts wss.Attachments, res *wss.Result, p *wss.Policy, now time.Time, sg sight) {
	s := e.store
	if n := s.opts.LearnAfter; n > 1 {
		key := sg.key
		if !sg.ok {
			key = shapeKey(data, atts != nil)
		}
		if !s.seen.see(key, n) {
			s.skipped(metrics.SkipFirstSight)
			return
		}
	}
	if !s.allow(time.Now()) {
		s.skipped(metrics.SkipRateLimited)
		return
	}
	t, err := e.newTemplate(data, atts, res, p, now)
	if err != nil {
		s.skipped(metrics.SkipUnsupported)
		e.log.Debug("template not learned", "policy", p.Name, "error", err)
		return
	}
	if ok, why := s.add(t); !ok && why != "" {
		s.skipped(why)
	} else if ok {
		e.log.Info("template learned", "policy", p.Name, "template", t.ID, "slots", len(t.slots), "bytes", t.size)
	}
	if t.gbody != nil && t.gbody.disagreed {
		// The fast pass is off for this template and its Body takes the
		// gate and C14N, so no verdict was wrong; but the pass is a
		// shadow of C14N that disagreed: the same alert, the same bug.
		s.shadowResult(metrics.ShadowDisagree)
		e.log.Error("fast Body pass and exclusive C14N disagree on a learned message; the template's Body takes the gate and C14N",
			"policy", p.Name, "template", t.ID)
	}
}

func (s *Store) skipped(reason string) {
	if s.metrics != nil {
		s.metrics.Skipped(reason)
	}
}

// newTemplate learns the template of a message (a package's root when
// atts is not nil) the DOM engine accepted at now with facts res.
func (e *Engine) newTemplate(data []byte, atts wss.Attachments, res *wss.Result, p *wss.Policy, now time.Time) (*Template, error) {
	t, err := learn(e.scanner, data, atts, res, p)
	if err == nil && (len(res.Decrypted) > 0 || t.pkg) {
		err = e.selfCheck(t, data, atts, res, p, now)
	}
	return t, err
}

// selfCheck runs a new template on the message it was learned from and
// compares the outcome with the DOM engine's: the two-template split of an
// encrypted message must reproduce the same plaintext and facts before it
// is used.
//
// A package's template is checked too: it also learns there in which
// base64 form the signer wrote each included part (refStep.lines).
func (e *Engine) selfCheck(t *Template, data []byte, atts wss.Attachments, res *wss.Result, p *wss.Policy, now time.Time) error {
	r := e.runs.Get().(*run)
	defer e.put(r)
	mt := matcher{data: data, caps: r.caps[:0], budget: maxVisits * (len(data)/64 + 16), limits: &e.limits}
	got := mt.walk(chain(t, 0, 0), 0)
	r.caps = mt.caps
	if got != t {
		return unsupported("the message does not match its own template")
	}
	r.t, r.data, r.p, r.now, r.e, r.atts = t, data, p, now.UTC(), e, atts
	tres, err := r.exec()
	if diff := Compare(tres, err, res, nil, p); diff != "" {
		return unsupported("self-check: %s", diff)
	}
	// t is not published yet.
	for _, rs := range r.flipped {
		rs.lines = !rs.lines
	}
	return nil
}

// shadow re-verifies a template-path verdict on the DOM engine; any
// disagreement rejects the message (DESIGN.md §4).
//
// A sampled check (must false) never waits for a DOM worker: without a free
// one it is skipped, so a hit does not queue behind fresh-shape messages
// (issue 14). A required check (a generic Body's first hits, must true)
// waits like any DOM message, since the generalization is not trusted yet;
// if the engine is overloaded the message is refused as overloaded.
func (e *Engine) shadow(t *Template, data []byte, atts wss.Attachments, p *wss.Policy, now time.Time, res *wss.Result, err error, must bool) error {
	var dres *wss.Result
	var derr error
	if must {
		dres, derr = e.domRun(data, atts, p, now)
	} else {
		dres, derr = e.dom.ProcessIfIdle(data, atts, p, now)
	}
	if errors.Is(derr, budget.ErrOverloaded) {
		if must {
			return derr
		}
		e.store.shadowResult(metrics.ShadowSkipped)
		return nil
	}
	diff := Compare(res, err, dres, derr, p)
	if diff == "" {
		e.store.shadowResult(metrics.ShadowAgree)
		t.checked.Add(1)
		return nil
	}
	e.store.shadowResult(metrics.ShadowDisagree)
	e.log.Error("template and DOM engine disagree", "policy", p.Name, "template", t.ID, "difference", diff,
		"template_error", errString(err), "dom_error", errString(derr))
	return wss.Failf(wss.ReasonShadow, "template path and DOM engine disagree: %s", diff)
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func (s *Store) shadowResult(r string) {
	if s.metrics != nil {
		s.metrics.Shadow(r)
	}
}

// certCache keeps parsed token certificates by their base64 text, so a
// partner's certificate is parsed once (trust decisions are cached by the
// trust store).
type certCache struct {
	mu sync.RWMutex
	m  map[string]*tokenCert
}

// tokenCert is a parsed token certificate and the text it was parsed from:
// the certCache's entry, and the one a signature step last used (sigStep.cert).
type tokenCert struct {
	key  string
	cert *x509.Certificate
}

const certCacheMax = 256

func (c *certCache) get(b64 []byte) *tokenCert {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.m[string(b64)]
}

// tokenCertificate is the certificate of st's BinarySecurityToken text
// b64. The one st last verified as trusted (run.signer) is tried first,
// compared byte for byte: a template is one partner's shape, so its token
// is nearly always the same certificate, and a kilobyte compare costs a
// fraction of hashing that kilobyte into the map under its lock (issue
// 14, 4 KiB hit). The trust store still verifies it on every message.
func (e *Engine) tokenCertificate(st *sigStep, b64 []byte) (*tokenCert, error) {
	if c := st.cert.Load(); c != nil && c.key == string(b64) {
		return c, nil
	}
	return e.certificate(b64)
}

func (e *Engine) certificate(b64 []byte) (*tokenCert, error) {
	if c := e.certs.get(b64); c != nil {
		return c, nil
	}
	der, err := wss.DecodeBase64(b64)
	if err != nil {
		return nil, err
	}
	return e.parseCertificate(string(b64), der)
}

// certificateDER is certificate for a token held in a MIME part (WSS4J
// storeBytesInAttachment): its octets, cached under a key no base64 text
// has.
func (e *Engine) certificateDER(der []byte) (*x509.Certificate, error) {
	key := "\x00" + string(der)
	if c := e.certs.get([]byte(key)); c != nil {
		return c.cert, nil
	}
	c, err := e.parseCertificate(key, der)
	if err != nil {
		return nil, err
	}
	return c.cert, nil
}

func (e *Engine) parseCertificate(key string, der []byte) (*tokenCert, error) {
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, wss.Wrap(wss.ReasonToken, err, "BinarySecurityToken")
	}
	tc := &tokenCert{key: key, cert: c}
	e.certs.mu.Lock()
	if len(e.certs.m) >= certCacheMax || e.certs.m == nil {
		e.certs.m = map[string]*tokenCert{}
	}
	e.certs.m[key] = tc
	e.certs.mu.Unlock()
	return tc, nil
}
