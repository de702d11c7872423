package dom

import (
	"sync"
	"time"

	"github.com/wssgw/wssgw/internal/soap"
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

// Engine is the DOM engine for one set of gate limits. It is safe for
// concurrent use.
type Engine struct {
	scanner *xmlscan.Scanner
	// docs pools the gate's Documents (message and SignedInfo), so that a
	// steady stream of messages reuses their slices and intern tables.
	docs sync.Pool
	// bufferLimit bounds an attachment held in memory
	// (wss.MaxBufferedAttachment; tests lower it).
	bufferLimit int64
	// workers bounds the messages processed at once; nil: no bound.
	workers Workers
	// wholeRescan gates the whole message again after each decryption,
	// as the engine did before issue 14; tests set it to compare the
	// plaintext splice with it.
	wholeRescan bool
	// tokens caches certificate parsing and issuer/serial lookups across
	// messages (tokenCache).
	tokens tokenCache
	// certs keeps the lookup values of configured certificates
	// (certKeysCache); carried those of certificates messages carry in
	// an X509Data, bounded as tokenCache's entries are.
	certs, carried certKeysCache
}

// Workers bounds how many messages the engine processes at once and the
// memory their work holds (the gateway's internal/budget.Budget, shared by
// every route): each message holds the gate's element and attribute
// arrays, which grow with its markup, not its size (issue 16). Acquire
// waits a short time for a worker, reserves scratch bytes for it, or fails;
// TryAcquire does the same without the wait.
type Workers interface {
	Acquire(scratch int64) (release func(), err error)
	TryAcquire(scratch int64) (release func(), err error)
}

// LimitWorkers makes every Process and ProcessAttachments take a worker of
// w first. Call it before the engine is used.
func (e *Engine) LimitWorkers(w Workers) { e.workers = w }

// New returns an engine gating messages with cfg.
func New(cfg xmlscan.Config) (*Engine, error) {
	s, err := xmlscan.NewScanner(cfg)
	if err != nil {
		return nil, err
	}
	e := &Engine{scanner: s, bufferLimit: wss.MaxBufferedAttachment}
	e.carried.limit = tokenCacheMax
	e.docs.New = func() any { return new(scratch) }
	return e, nil
}

// maxKeptCanon bounds the canonical SignedInfo buffer a pooled scratch
// keeps between messages.
const maxKeptCanon = 64 << 10

// scratch is the reusable per-message state.
type scratch struct {
	doc, signedInfo xmlscan.Document
	// spare receives the message with decrypted plaintext spliced in
	// (message.reload), then swaps places with doc.
	spare xmlscan.Document
	// ids is the id index (message.indexIDs), kept for the next message.
	ids map[string]int
	// canon holds the canonical SignedInfo being verified.
	canon []byte
}

// Process gates data, processes its Security header under policy p at time
// now, and returns the verified facts. It does not check the facts against
// the policy's requirements or the replay store: p.Check does, for either
// engine. Every failure is a *wss.Error, except that no worker was free
// (LimitWorkers): that is the Workers' own error, not a verdict on the
// message.
func (e *Engine) Process(data []byte, p *wss.Policy, now time.Time) (*wss.Result, error) {
	return e.run(data, nil, p, now, true)
}

// ProcessIfIdle is Process for work that may be skipped but must not wait
// for a worker (atts nil for a plain message, else a package's other
// parts): the template path's shadow check of a hit, which runs
// while the hit's request waits for its verdict. Without a free worker
// (LimitWorkers) it fails at once with the Workers' error, so a template
// hit never queues behind fresh-shape messages (issue 14).
func (e *Engine) ProcessIfIdle(data []byte, atts wss.Attachments, p *wss.Policy, now time.Time) (*wss.Result, error) {
	return e.run(data, atts, p, now, false)
}

// run is Process, with the package's other parts when atts is not nil;
// wait says whether to wait for a worker.
func (e *Engine) run(data []byte, atts wss.Attachments, p *wss.Policy, now time.Time, wait bool) (*wss.Result, error) {
	if e.workers != nil {
		acquire := e.workers.Acquire
		if !wait {
			acquire = e.workers.TryAcquire
		}
		release, err := acquire(scratchBytes(data))
		if err != nil {
			return nil, err
		}
		defer release()
	}
	start := time.Now()
	sc := e.docs.Get().(*scratch)
	// The Result keeps no reference to the Documents, only to the bytes;
	// Reset drops the Documents' hold on this message's bytes.
	m := &message{engine: e, p: p, now: now.UTC(), doc: &sc.doc, spare: &sc.spare, sd: &sc.signedInfo, ids: sc.ids, canon: sc.canon}
	defer func() {
		sc.doc.Reset()
		sc.spare.Reset()
		sc.signedInfo.Reset()
		clear(m.ids) // the next message starts with an empty index
		sc.ids = m.ids
		if cap(m.canon) <= maxKeptCanon {
			sc.canon = m.canon[:0]
		}
		e.docs.Put(sc)
	}()
	// A signed message records a dozen algorithm uses or more (use):
	// room for them at once rather than in append's steps.
	m.res = &wss.Result{Security: [2]int{-1, -1}, Token: -1, Algorithms: make([]wss.AlgorithmUse, 0, 16)}
	if atts != nil {
		if err := m.initAttachments(atts); err != nil {
			return nil, err
		}
	}
	if err := m.load(data); err != nil {
		return nil, err
	}
	if err := m.process(); err != nil {
		return nil, err
	}
	if atts != nil {
		m.attachmentFacts()
	}
	m.res.Document = m.data
	m.res.ProcessTime = time.Since(start)
	return m.res, nil
}

// message is the state of one Process call.
type message struct {
	engine *Engine
	p      *wss.Policy
	now    time.Time
	res    *wss.Result

	data  []byte
	doc   *xmlscan.Document
	spare *xmlscan.Document // the next doc after a decryption (reload); nil until needed
	sd    *xmlscan.Document // the canonical SignedInfo being checked
	ids   map[string]int    // id value → gate index
	canon []byte            // scratch for the canonical SignedInfo

	version                   soap.Version
	env, header, body, secIdx int // gate indices; -1 when absent

	// keys are symmetric keys from processed EncryptedKeys, by "#id" and
	// by EncryptedKeySHA1 value; nil until the first (setKey): a signed
	// message without encryption does not allocate it.
	keys map[string][]byte
	// signatures and decryptions processed, to account for every
	// ds:Signature and xenc:EncryptedData of the message.
	signatures int
	// digests are the References' hashes, by algorithm (digest).
	digests []keptDigest
	// plain is set for a plain XML document (VerifyDocument,
	// DecryptDocument): no SOAP structure is located.
	plain bool
	// reloads counts the decryptions spliced into the message (splice):
	// gate indices taken before one are stale.
	reloads int
	// prechecked is set once precheck ran on the received message.
	prechecked bool
	// att is the MTOM/SwA package of ProcessAttachments, nil otherwise.
	att *attachmentState
}

// load gates data and builds the indexes.
func (m *message) load(data []byte) error {
	start := time.Now()
	defer func() { m.res.GateTime += time.Since(start) }()
	if err := m.engine.scanner.Scan(data, m.doc); err != nil {
		return wss.Wrap(wss.ReasonMalformed, err, "gate")
	}
	m.data = data
	return m.index()
}

// reload gates the message with element region replaced by pt, scanning
// only pt (xmlscan.ScanReplace), and builds the indexes again.
func (m *message) reload(region int, pt []byte) error {
	start := time.Now()
	defer func() { m.res.GateTime += time.Since(start) }()
	if m.spare == nil {
		m.spare = new(xmlscan.Document)
	}
	if err := m.engine.scanner.ScanReplace(m.doc, region, pt, m.spare); err != nil {
		return wss.Wrap(wss.ReasonMalformed, err, "gate")
	}
	m.doc, m.spare = m.spare, m.doc
	m.spare.Reset() // drops its hold on the old message bytes
	m.data = m.doc.Data
	return m.index()
}

// index checks the gated message's ids and value elements and locates
// its SOAP structure.
func (m *message) index() error {
	if err := m.indexIDs(); err != nil {
		return err
	}
	if err := m.checkValues(); err != nil {
		return err
	}
	if !m.plain && !m.prechecked {
		// Once, on the message as received, before any reference is
		// resolved and before any key.
		m.prechecked = true
		if err := m.precheck(); err != nil {
			return err
		}
	}
	if m.att != nil {
		if err := m.indexXOP(); err != nil {
			return err
		}
	}
	if m.plain {
		return nil
	}
	return m.locate()
}

// children returns the gate indices of element i's child elements, in
// order, from the gate's own structure (Elements[i].Next bounds a subtree).
func (m *message) children(i int) []int {
	var out []int
	for c := m.doc.FirstChild(i); c >= 0; c = m.doc.NextSibling(c) {
		out = append(out, c)
	}
	return out
}

// nthChild returns the gate index of element i's child element k (from
// 0), or -1 when it has no more than k children.
func (m *message) nthChild(i, k int) int {
	c := m.doc.FirstChild(i)
	for ; c >= 0 && k > 0; k-- {
		c = m.doc.NextSibling(c)
	}
	return c
}

// is reports whether element i has the expanded name {space}local.
func (m *message) is(i int, space, local string) bool {
	e := &m.doc.Elements[i]
	return e.Local == local && e.Space == space
}

// name returns element i's expanded name for logs.
func (m *message) name(i int) string {
	e := &m.doc.Elements[i]
	if e.Prefix != "" {
		return e.Prefix + ":" + e.Local
	}
	return e.Local
}

// attr returns the normalized value of element i's attribute {space}local
// and whether it is present.
func (m *message) attr(i int, space, local string) (string, bool) {
	j := m.doc.FindAttr(i, space, local)
	if j < 0 {
		return "", false
	}
	return attrString(m.doc, j), true
}

// text returns the character data directly inside element i.
func (m *message) text(i int) string {
	return string(m.doc.Text(i, nil))
}
