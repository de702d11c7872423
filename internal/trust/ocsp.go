package trust

import (
	"bytes"
	"context"
	"crypto/x509"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ocsp"
)

// OCSP defaults. Refresh is how often a response is fetched again (earlier
// when its NextUpdate comes sooner). There is no default grace after
// NextUpdate (OCSPOptions.MaxStaleness): the responder said how long its
// answer holds.
const (
	DefaultOCSPRefresh    = 5 * time.Minute
	DefaultOCSPTimeout    = 5 * time.Second
	DefaultOCSPMaxEntries = 10000
	ocspMaxResponse       = 64 << 10         // bytes read from a responder
	ocspRetry             = 30 * time.Second // retry after a failed fetch (at most Refresh)
	ocspIdle              = 24 * time.Hour   // a seen certificate unused this long is no longer fetched
	ocspSkew              = 5 * time.Minute  // tolerated responder clock skew on ThisUpdate
	ocspParallel          = 4                // fetches in flight at once
)

// Values of OCSPOptions.Observer's result: what a fetch brought back.
const (
	OCSPGood    = "good"
	OCSPRevoked = "revoked"
	OCSPUnknown = "unknown"
	OCSPError   = "error" // no usable response: network, HTTP, parse, signature, older than the cached one
)

// OCSPOptions configures an OCSPChecker.
type OCSPOptions struct {
	// ResponderURL replaces the responder named in the certificates'
	// Authority Information Access.
	ResponderURL string
	Refresh      time.Duration
	MaxStaleness time.Duration
	Timeout      time.Duration // per fetch
	// RejectUnknown rejects a certificate whose status is unknown: the
	// responder said "unknown", or no response has been fetched yet (a cold
	// cache, no responder to ask, the responder unreachable since start).
	RejectUnknown bool
	// RejectStale rejects a certificate whose last response is past its
	// NextUpdate plus MaxStaleness. A response without NextUpdate (the
	// responder always has newer information) counts for two refresh
	// intervals after its ThisUpdate, so one failed fetch is tolerated.
	RejectStale bool
	MaxEntries  int // certificates watched; default 10000
	Client      *http.Client
	Clock       func() time.Time
	// Observer, when set, is called after every fetch with its result
	// (OCSPGood, OCSPRevoked, OCSPUnknown, OCSPError).
	Observer func(result string)
	Logger   *slog.Logger // failed fetches are logged at Warn; default discards
}

// OCSPChecker keeps OCSP responses for the certificates a trust store knows
// (pinned and known files) or has verified, fetching them in the background
// (Run). Verification only reads the cache: it never waits on a responder.
// One checker outlives the trust stores a reloader builds, so a reload does
// not empty it.
type OCSPChecker struct {
	opts OCSPOptions
	mu   sync.RWMutex
	ents map[string]*ocspEntry // by leaf DER
	wake chan struct{}
	obs  atomic.Pointer[func(result string)]
}

// ocspEntry is one watched certificate. Its fields other than state and
// lastUsed are immutable.
type ocspEntry struct {
	leaf, issuer *x509.Certificate
	url          string
	known        bool                      // from the trust store's files: never evicted
	self         bool                      // self-signed: nobody to ask, always passes
	state        atomic.Pointer[ocspState] // nil until the first fetch
	lastUsed     atomic.Int64              // Unix nanoseconds of the last check
}

type ocspState struct {
	resp      *ocsp.Response // last usable response, nil if none yet
	nextFetch time.Time
	failing   bool // the last fetch failed (logged once per outage)
}

// NewOCSPChecker returns a checker with the options' defaults filled in.
func NewOCSPChecker(o OCSPOptions) *OCSPChecker {
	if o.Refresh <= 0 {
		o.Refresh = DefaultOCSPRefresh
	}
	if o.MaxStaleness < 0 {
		o.MaxStaleness = 0
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultOCSPTimeout
	}
	if o.MaxEntries <= 0 {
		o.MaxEntries = DefaultOCSPMaxEntries
	}
	if o.Client == nil {
		o.Client = &http.Client{}
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	c := &OCSPChecker{opts: o, ents: map[string]*ocspEntry{}, wake: make(chan struct{}, 1)}
	if o.Observer != nil {
		c.Observe(o.Observer)
	}
	return c
}

// Observe replaces the Observer, for a caller that wires metrics after
// the checker was built (the policy compiles it; the gateway counts).
func (c *OCSPChecker) Observe(f func(result string)) { c.obs.Store(&f) }

// Watch adds leaf (issued by issuer) to the certificates kept fresh. known
// marks certificates from configuration files. A self-signed certificate
// (a pinned one) is remembered as such and never fetched: there is no one
// to ask, and its signature is checked once here, not per message.
func (c *OCSPChecker) Watch(leaf, issuer *x509.Certificate, known bool) {
	if leaf == nil {
		return
	}
	key := string(leaf.Raw)
	c.mu.RLock()
	e := c.ents[key]
	c.mu.RUnlock()
	if e != nil {
		e.lastUsed.Store(c.opts.Clock().UnixNano())
		return
	}
	e = &ocspEntry{leaf: leaf, issuer: issuer, url: c.responder(leaf), known: known, self: isSelfSigned(leaf)}
	e.lastUsed.Store(c.opts.Clock().UnixNano())
	c.mu.Lock()
	if c.ents[key] == nil {
		if len(c.ents) >= c.opts.MaxEntries {
			c.evictLocked()
		}
		c.ents[key] = e
	}
	c.mu.Unlock()
	select { // fetch it soon, without waiting for the next tick
	case c.wake <- struct{}{}:
	default:
	}
}

// responder is the URL to ask about leaf: the override, else the first
// HTTP responder in its AIA; "" when there is none.
func (c *OCSPChecker) responder(leaf *x509.Certificate) string {
	if c.opts.ResponderURL != "" {
		return c.opts.ResponderURL
	}
	for _, u := range leaf.OCSPServer {
		if strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://") {
			return u
		}
	}
	return ""
}

// evictLocked drops the least recently used certificate that came from a
// message (known ones stay: the files name them).
func (c *OCSPChecker) evictLocked() {
	var oldest string
	var at int64
	for k, e := range c.ents {
		if u := e.lastUsed.Load(); !e.known && (oldest == "" || u < at) {
			oldest, at = k, u
		}
	}
	if oldest != "" {
		delete(c.ents, oldest)
	}
}

// Check decides leaf's revocation status from the cache alone, at the
// checker's clock (revocation is about what is known now, not at the
// message's time). A revoked certificate is always rejected; unknown and
// stale ones as configured.
func (c *OCSPChecker) Check(leaf *x509.Certificate) error {
	watched, err := c.check(leaf)
	if !watched {
		if isSelfSigned(leaf) {
			return nil
		}
		return c.unknown(leaf, "not watched")
	}
	return err
}

// check is Check for a watched leaf, in one map lookup; watched is false
// (and err nil) when leaf is not in the cache.
func (c *OCSPChecker) check(leaf *x509.Certificate) (watched bool, err error) {
	c.mu.RLock()
	e := c.ents[string(leaf.Raw)]
	c.mu.RUnlock()
	if e == nil {
		return false, nil
	}
	return true, c.decide(e, leaf)
}

// decide is the verdict on a watched leaf.
func (c *OCSPChecker) decide(e *ocspEntry, leaf *x509.Certificate) error {
	now := c.opts.Clock()
	e.lastUsed.Store(now.UnixNano())
	st := e.state.Load()
	switch {
	case e.self:
		return nil
	case e.url == "":
		return c.unknown(leaf, "no OCSP responder for it")
	case st == nil || st.resp == nil:
		return c.unknown(leaf, "no OCSP response yet")
	case st.resp.Status == ocsp.Revoked:
		return fmt.Errorf("crypto: serial %s of %q revoked at %s (OCSP): %w", leaf.SerialNumber, leaf.Subject.CommonName,
			st.resp.RevokedAt.UTC().Format(time.RFC3339), ErrRevoked)
	}
	if until := c.staleAfter(st); now.After(until) && c.opts.RejectStale {
		return fmt.Errorf("crypto: OCSP response for %q stale since %s: %w", leaf.Subject.CommonName, until.UTC().Format(time.RFC3339), ErrOCSP)
	}
	if st.resp.Status != ocsp.Good {
		return c.unknown(leaf, "OCSP status unknown")
	}
	return nil
}

func (c *OCSPChecker) unknown(leaf *x509.Certificate, why string) error {
	if !c.opts.RejectUnknown {
		return nil
	}
	return fmt.Errorf("crypto: serial %s of %q: %s: %w", leaf.SerialNumber, leaf.Subject.CommonName, why, ErrOCSP)
}

// staleAfter is when a response stops counting: its NextUpdate (or, when
// the responder gives none, ThisUpdate plus two refresh intervals) plus
// MaxStaleness.
func (c *OCSPChecker) staleAfter(st *ocspState) time.Time {
	end := st.resp.NextUpdate
	if end.IsZero() {
		end = st.resp.ThisUpdate.Add(2 * c.opts.Refresh)
	}
	return end.Add(c.opts.MaxStaleness)
}

// Run fetches due responses until ctx is done: at start, when a
// certificate is added, and on a tick of at most a second (so a short
// NextUpdate is honoured).
func (c *OCSPChecker) Run(ctx context.Context) {
	tick := min(c.opts.Refresh, time.Second)
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		c.FetchDue(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-c.wake:
		}
	}
}

// FetchDue fetches, one after the other, every response that is due, and
// forgets certificates from messages that were not used for a day.
func (c *OCSPChecker) FetchDue(ctx context.Context) {
	now := c.opts.Clock()
	var due []*ocspEntry
	c.mu.Lock()
	for k, e := range c.ents {
		if !e.known && now.Sub(time.Unix(0, e.lastUsed.Load())) > ocspIdle {
			delete(c.ents, k)
			continue
		}
		if st := e.state.Load(); !e.self && e.url != "" && (st == nil || !now.Before(st.nextFetch)) {
			due = append(due, e)
		}
	}
	c.mu.Unlock()
	// A few at a time: one unreachable responder (a timeout per
	// certificate) must not hold up the others for long.
	sem := make(chan struct{}, ocspParallel)
	var wg sync.WaitGroup
	for _, e := range due {
		if ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			c.refresh(ctx, e)
		})
	}
	wg.Wait()
}

// refresh fetches one response and stores it unless it is older than the
// one held (an HTTP responder can be replayed; keep the newest).
func (c *OCSPChecker) refresh(ctx context.Context, e *ocspEntry) {
	old := e.state.Load()
	next := &ocspState{}
	if old != nil {
		*next = *old
	}
	resp, err := c.fetch(ctx, e)
	now := c.opts.Clock()
	if err == nil && old != nil && old.resp != nil && resp.ThisUpdate.Before(old.resp.ThisUpdate) {
		err = fmt.Errorf("crypto: OCSP response older than the cached one: %w", ErrOCSP)
	}
	result := OCSPError
	if err == nil {
		next.resp = resp
		next.nextFetch = now.Add(c.opts.Refresh)
		if nu := resp.NextUpdate; !nu.IsZero() && nu.Before(next.nextFetch) {
			next.nextFetch = nu
		}
		result = statusResult(resp.Status)
		if next.failing {
			c.opts.Logger.Info("OCSP fetch succeeded again", "subject", e.leaf.Subject.String(), "responder", e.url, "status", result)
		}
		next.failing = false
	} else {
		next.nextFetch = now.Add(min(ocspRetry, c.opts.Refresh))
		if !next.failing { // once per outage, not at every retry
			c.opts.Logger.Warn("OCSP fetch failed; keeping the previous response and retrying",
				"subject", e.leaf.Subject.String(), "serial", e.leaf.SerialNumber.String(), "responder", e.url, "error", err)
		}
		next.failing = true
	}
	e.state.Store(next)
	if f := c.obs.Load(); f != nil && *f != nil {
		(*f)(result)
	}
}

func statusResult(s int) string {
	switch s {
	case ocsp.Good:
		return OCSPGood
	case ocsp.Revoked:
		return OCSPRevoked
	}
	return OCSPUnknown
}

// fetch POSTs an OCSP request (SHA-1 CertID, what RFC 5019 responders
// support) and checks the response: signed by the issuer or a responder it
// delegated to, about this certificate, not from the future.
func (c *OCSPChecker) fetch(ctx context.Context, e *ocspEntry) (*ocsp.Response, error) {
	if e.issuer == nil {
		return nil, fmt.Errorf("crypto: no issuer certificate for %q: %w", e.leaf.Subject.CommonName, ErrOCSP)
	}
	der, err := ocsp.CreateRequest(e.leaf, e.issuer, nil)
	if err != nil {
		return nil, fmt.Errorf("crypto: OCSP request: %v: %w", err, ErrOCSP)
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(der))
	if err != nil {
		return nil, fmt.Errorf("crypto: OCSP responder %q: %v: %w", e.url, err, ErrOCSP)
	}
	req.Header.Set("Content-Type", "application/ocsp-request")
	req.Header.Set("Accept", "application/ocsp-response")
	res, err := c.opts.Client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("crypto: OCSP responder: %v: %w", err, ErrOCSP)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, ocspMaxResponse))
	if err != nil || res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("crypto: OCSP responder %q: HTTP %d %v: %w", e.url, res.StatusCode, err, ErrOCSP)
	}
	resp, err := ocsp.ParseResponseForCert(body, e.leaf, e.issuer)
	if err != nil {
		return nil, fmt.Errorf("crypto: OCSP response: %v: %w", err, ErrOCSP)
	}
	if resp.ThisUpdate.After(c.opts.Clock().Add(ocspSkew)) {
		return nil, fmt.Errorf("crypto: OCSP response from the future (%s): %w", resp.ThisUpdate.UTC().Format(time.RFC3339), ErrOCSP)
	}
	return resp, nil
}

// OCSPStats summarises the cache for metrics: certificates by status
// (good, revoked, unknown, stale, missing: no response yet) and the age of
// the oldest response held.
type OCSPStats struct {
	ByStatus map[string]int
	Oldest   time.Duration
}

// Status values of OCSPStats besides the fetch results.
const (
	OCSPStale   = "stale"
	OCSPMissing = "missing"
)

// Stats reports the cache now.
func (c *OCSPChecker) Stats() OCSPStats {
	now := c.opts.Clock()
	s := OCSPStats{ByStatus: map[string]int{}}
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, e := range c.ents {
		if e.self {
			continue
		}
		st := e.state.Load()
		switch {
		case st == nil || st.resp == nil:
			s.ByStatus[OCSPMissing]++
			continue
		case now.After(c.staleAfter(st)) && st.resp.Status != ocsp.Revoked:
			s.ByStatus[OCSPStale]++
		default:
			s.ByStatus[statusResult(st.resp.Status)]++
		}
		if age := now.Sub(st.resp.ThisUpdate); age > s.Oldest {
			s.Oldest = age
		}
	}
	return s
}

// isSelfSigned checks the signature directly: CheckSignatureFrom would
// also demand that the certificate be a CA, and pinned leaves are not.
func isSelfSigned(c *x509.Certificate) bool {
	return bytes.Equal(c.RawIssuer, c.RawSubject) && c.CheckSignature(c.SignatureAlgorithm, c.RawTBSCertificate, c.Signature) == nil
}
