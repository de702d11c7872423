package template

import (
	"bytes"
	"encoding/base64"
	"hash/maphash"
	"sync"
	"time"

	"github.com/wssgw/wssgw/internal/wss"
)

// First-sight lanes (issue 14: "a bound on concurrent DOM work so fresh
// shapes cannot starve hits"). A message no template describes costs the
// DOM engine 1.2-1.4x a hit end to end, so 10 % fresh-shape traffic cannot
// remove less than ~10 % of the legitimate throughput while every fresh
// message is verified: part of a fresh flood must be refused before the
// DOM engine runs, cheaply, and without refusing the legitimate messages
// that also miss.
//
// Which misses are legitimate is known before the DOM engine runs from two
// things the store learned from ACCEPTED messages only, so a sender
// without a trusted key can change neither:
//   - a shape key seen accepted before (sightings) is not a first sight:
//     a partner's DOM-only shapes (STR-Transform, EncryptedHeader, the
//     symmetric binding, messages over templates.maxMessageBytes) and a
//     learned shape whose template was evicted go to the DOM engine as
//     before, under the global DOM share;
//   - a first sight claiming a signer an accepted message claimed before
//     (signers) waits in that signer's own lane, one message at a time
//     and paced (budget.Budget.EnterFirstSight); a first sight claiming
//     anything else, or nothing, shares lane 0.
//
// An attacker holding one trusted key is then held to his own lane (his
// fresh shapes are first sights of a known signer), a keyless flood
// inventing identities gets one lane in all, not one per invention, and a
// partner rolling out a new stack under its own key keeps its lane free.
// Hits never enter a lane. The claim is read from unverified bytes: it
// only picks a lane, never decides acceptance.

// FirstSight paces first sights of a shape per lane: EnterFirstSight
// admits one message into lane (leave is called when its DOM run ends) or
// refuses it at once with an error the gateway maps (a
// *budget.OverloadError, reason first_sight). budget.Budget implements it.
type FirstSight interface {
	EnterFirstSight(lane uint64) (leave func(), err error)
}

// LimitFirstSight makes every first sight of a shape enter a lane of f
// before the DOM engine runs it. Call it before the engine is used; nil
// means no lanes. Lanes apply only while the store learns at a later
// sight (Options.LearnAfter > 1): with learning at first sight, the
// sightings that tell a first sight apart are not kept.
func (e *Engine) LimitFirstSight(f FirstSight) { e.firstSight = f }

// lanes reports whether misses enter first-sight lanes.
func (e *Engine) lanes() bool { return e.firstSight != nil && e.store.opts.LearnAfter > 1 }

// sight is what the pre-DOM walk found of a miss: its shape key and the
// signer it claims (0: none). ok is false when the walk did not run.
type sight struct {
	key, signer uint64
	ok          bool
	// token: the claim is a token's text (claim.signer), so the
	// certificate that verified the message must be that token's.
	token bool
}

// enter takes the message's lane: none for a shape accepted before, the
// claimed signer's when an accepted message claimed it, else lane 0.
func (e *Engine) enter(s sight) (leave func(), err error) {
	if e.store.seen.has(s.key) {
		return noLeave, nil
	}
	return e.firstSight.EnterFirstSight(e.store.signers.lane(s.signer))
}

func noLeave() {}

// domRunIn is domRun inside a lane: leave runs when the DOM run ends, also
// if it panics (a lane left busy would refuse its signer's first sights
// for good).
func (e *Engine) domRunIn(leave func(), data []byte, atts wss.Attachments, p *wss.Policy, now time.Time) (*wss.Result, error) {
	defer leave()
	return e.domRun(data, atts, p, now)
}

// accepted records what an accepted miss teaches the lanes: its claim is
// known from now on, as the lane of the certificate that verified it. Its
// shape is recorded by learn (sightings).
func (e *Engine) accepted(s sight, res *wss.Result) {
	if s.ok && s.signer != 0 {
		if lane, ok := signerLane(s, res); ok {
			e.store.signers.record(s.signer, lane)
		}
	}
}

// signerLane is the lane of an accepted message's claim: a hash of the
// certificate it was verified with, so that one key named four ways (the
// token itself, its thumbprint, its SKI, its issuer and serial: four
// claims) still has one lane, not four; the claim itself for a signature
// without a certificate (a symmetric key). Never 0, the lane of unknown
// claims.
//
// The claim is read from unverified bytes, so it is recorded only where
// it names what verified: a claimed token must be the certificate of a
// verified signature (a key holder writing another partner's public
// certificate into his Security header, unused, or past the tokens the
// walk remembers, or in a Security header for another role, would else
// move that partner's claim into his own lane: ok false); a key reference
// (no token) is the first signature's, as the walk reads the first
// ds:Signature's KeyInfo.
func signerLane(s sight, res *wss.Result) (lane uint64, ok bool) {
	if s.token {
		for _, sig := range res.Signatures {
			if sig.Signer != nil && sig.Signer.Certificate != nil && tokenClaim(sig.Signer.Certificate.Raw) == s.signer {
				return max(maphash.Bytes(shapeSeed, sig.Signer.Certificate.Raw), 1), true
			}
		}
		return 0, false
	}
	lane = s.signer
	if len(res.Signatures) > 0 {
		if sig := res.Signatures[0]; sig.Signer != nil && sig.Signer.Certificate != nil {
			lane = maphash.Bytes(shapeSeed, sig.Signer.Certificate.Raw)
		}
	}
	return max(lane, 1), true
}

// tokenClaim is the claim of a token holding the DER certificate der:
// what claim.signer computes from its base64 text.
func tokenClaim(der []byte) uint64 {
	var h maphash.Hash
	h.SetSeed(claimSeed)
	h.WriteByte('T')
	h.WriteString(base64.StdEncoding.EncodeToString(der))
	return max(h.Sum64(), 1)
}

// signerLanes maps the claims of accepted misses to their lanes, in two
// bounded generations as sightings keeps keys: a flood of accepted claims
// (a key holder naming his key in ever new ways cannot: maxClaimsPerLane)
// pushes an old claim out after sightingsMax/2 newer ones, and its next
// first sight shares lane 0 until accepted again. Only the DOM path
// touches it.
type signerLanes struct {
	mu       sync.Mutex
	cur, old map[uint64]uint64
	// perLane counts the claims of cur and old per lane, to hold each
	// lane to maxClaimsPerLane.
	perLane map[uint64]int
}

// maxClaimsPerLane bounds the claims one lane is known by. A key is
// named four ways (its token, thumbprint, SKI, issuer and serial), but
// the DOM engine accepts one way spelled many ways (a serial with leading
// zeros, an issuer name's spacing): unbounded, a key holder's accepted
// messages could make sightingsMax claims, push every partner's claim out
// and send the partners' new shapes to lane 0 beside his flood
// (TestFirstSightClaimsPerKey). A claim past the bound stays unknown.
const maxClaimsPerLane = 4

// lane is the lane of claim: its certificate's when an accepted message
// made it, else 0.
func (l *signerLanes) lane(claim uint64) uint64 {
	if claim == 0 {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if lane, ok := l.cur[claim]; ok {
		return lane
	}
	return l.old[claim]
}

// record makes lane the lane of claim, unless lane has maxClaimsPerLane
// other claims.
func (l *signerLanes) record(claim, lane uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	prev, inCur := l.cur[claim]
	known := inCur
	if !known {
		prev, known = l.old[claim]
	}
	if (!known || prev != lane) && l.perLane[lane] >= maxClaimsPerLane {
		return
	}
	if known {
		delete(l.cur, claim)
		delete(l.old, claim)
		l.drop(prev)
	}
	if !inCur && len(l.cur) >= sightingsMax/2 {
		for _, lane := range l.old {
			l.drop(lane)
		}
		l.old, l.cur = l.cur, nil
	}
	if l.cur == nil {
		l.cur = make(map[uint64]uint64)
	}
	if l.perLane == nil {
		l.perLane = make(map[uint64]int)
	}
	l.cur[claim] = lane
	l.perLane[lane]++
}

// drop forgets one claim of lane in perLane.
func (l *signerLanes) drop(lane uint64) {
	if l.perLane[lane]--; l.perLane[lane] <= 0 {
		delete(l.perLane, lane)
	}
}

// has reports whether key was seen (an accepted message had it), without
// counting a sighting.
func (s *sightings) has(key uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.cur[key]; ok {
		return true
	}
	_, ok := s.old[key]
	return ok
}

// mark records key as seen at least once.
func (s *sightings) mark(key uint64) { s.see(key, 2) }

// The claim: which signer a message says it is signed by, read in the
// shape walk from unverified bytes. It is the text of the
// wsse:BinarySecurityToken the first ds:Signature's KeyInfo references
// (wsse:Reference URI "#id" = the token's wsu:Id), else of the Security
// header's first token, else the text content of that KeyInfo's
// wsse:SecurityTokenReference (a KeyIdentifier's value, X509IssuerName
// and X509SerialNumber, ...), whitespace and whitespace character
// references left out so a certificate's base64 hashes alike however it
// is wrapped. Never the Reference URI itself: it varies per message.
//
// Only the Signature's KeyInfo counts, not the first KeyInfo of the
// header: an xenc:EncryptedKey comes before the Signature (WSS4J, the
// project's signer) and its KeyInfo names the gateway's own certificate,
// the same for every partner. The referenced token is preferred to the
// first one for the same reason: an encrypting partner may carry the
// gateway's certificate as a token too.
//
// The state is a few ints and one hash: nothing is allocated, and only
// maxClaimTokens tokens are remembered.
type claim struct {
	sec, sig, ki, str int // levels of the open Security, its first Signature, its KeyInfo, its STR; -1 none
	secDone, sigDone  bool
	strDone           bool
	capture           int // level whose text is hashed, -1 none
	capToken, capAny  bool
	ch                maphash.Hash
	id                span // the wsu:Id of the token being opened
	uri               span // the first Reference URI of the STR
	tokens            [maxClaimTokens]claimToken
	nTokens           int
	strSum            uint64
	strAny, haveURI   bool
}

// maxClaimTokens is how many of the Security header's tokens the claim
// remembers: a signer's, an encryption's, a spare.
const maxClaimTokens = 4

type claimToken struct {
	id  span
	sum uint64
}

// Roles of a start tag in the claim: whose attribute values it notes.
const (
	roleNone  = iota
	roleToken // a token in the Security header: its wsu:Id
	roleRef   // a Reference in the Signature's STR: its URI
	roleOther // an element the claim tracks but whose attributes it ignores
)

var claimSeed = maphash.MakeSeed()

func (c *claim) reset() {
	c.sec, c.sig, c.ki, c.str, c.capture = -1, -1, -1, -1, -1
	c.ch.SetSeed(claimSeed)
}

// role is the part a start tag of local name local at level lvl plays.
func (c *claim) role(local []byte, lvl int) int {
	switch {
	case c.sec < 0:
		if !c.secDone && lvl == 2 && string(local) == "Security" {
			return roleOther
		}
	case lvl == c.sec+1:
		switch string(local) {
		case "BinarySecurityToken":
			if c.nTokens < maxClaimTokens && c.capture < 0 {
				c.id = span{}
				return roleToken
			}
		case "Signature":
			if c.sig < 0 && !c.sigDone {
				return roleOther
			}
		}
	case c.sig >= 0 && lvl == c.sig+1 && c.ki < 0:
		if string(local) == "KeyInfo" {
			return roleOther
		}
	case c.ki >= 0 && lvl == c.ki+1 && c.str < 0:
		if !c.strDone && c.capture < 0 && string(local) == "SecurityTokenReference" {
			return roleOther
		}
	case c.str >= 0 && lvl == c.str+1:
		if !c.haveURI && string(local) == "Reference" {
			return roleRef
		}
	}
	return roleNone
}

// notes reports whether the attribute of local name local of an element of
// role is one the claim keeps.
func (c *claim) notes(role int, local []byte) bool {
	return role == roleToken && string(local) == "Id" || role == roleRef && string(local) == "URI"
}

// attr keeps a noted attribute's value, data[from:to].
func (c *claim) attr(role, from, to int) {
	switch role {
	case roleToken:
		c.id = span{from, to}
	case roleRef:
		if !c.haveURI {
			c.uri, c.haveURI = span{from, to}, true
		}
	}
}

// open enters a start tag at lvl that is not empty.
func (c *claim) open(role, lvl int) {
	switch {
	case role == roleNone || role == roleRef:
	case c.sec < 0:
		c.sec = lvl
	case lvl == c.sec+1 && role == roleToken:
		c.startCapture(lvl, true)
	case lvl == c.sec+1:
		c.sig = lvl
	case c.ki < 0:
		c.ki = lvl
	default:
		c.str = lvl
		c.startCapture(lvl, false)
	}
}

func (c *claim) startCapture(lvl int, token bool) {
	c.capture, c.capToken, c.capAny = lvl, token, false
	c.ch.Reset()
	if token {
		c.ch.WriteByte('T')
	} else {
		c.ch.WriteByte('S')
	}
}

// end leaves the element at lvl. Levels compare with <= so that a
// malformed message that closes more than it opened cannot leave a
// capture running.
func (c *claim) end(lvl int) {
	if c.capture >= 0 && lvl <= c.capture {
		if c.capToken && c.capAny {
			c.tokens[c.nTokens] = claimToken{id: c.id, sum: c.ch.Sum64()}
			c.nTokens++
		} else if !c.capToken {
			c.strSum, c.strAny, c.strDone = c.ch.Sum64(), c.capAny, true
		}
		c.capture = -1
	}
	if c.str >= 0 && lvl <= c.str {
		c.str = -1
	}
	if c.ki >= 0 && lvl <= c.ki {
		c.ki = -1
	}
	if c.sig >= 0 && lvl <= c.sig {
		c.sig, c.sigDone = -1, true
		c.ki, c.str = -1, -1
	}
	if c.sec >= 0 && lvl <= c.sec {
		c.sec, c.secDone = -1, true
		c.sig, c.ki, c.str = -1, -1, -1
	}
}

// text hashes a text segment of the element being captured, without its
// whitespace and whitespace character references.
func (c *claim) text(seg []byte) {
	for len(seg) > 0 {
		k := 0
		for k < len(seg) && !textStop[seg[k]] {
			k++
		}
		if k > 0 {
			c.ch.Write(seg[:k])
			c.capAny = true
			seg = seg[k:]
			continue
		}
		if seg[0] == '&' {
			if n := spaceRef(seg); n > 0 {
				seg = seg[n:]
				continue
			}
			if c.capToken {
				// No certificate's base64 holds another reference: no
				// claim, and megabytes of "&#1" are not hashed one by
				// one before the gate refuses them (BenchmarkLaneWalkCost).
				c.capture = -1
				return
			}
			c.ch.WriteByte('&')
			c.capAny = true
		}
		seg = seg[1:]
	}
}

// textStop are the bytes text stops a run at: XML whitespace and the
// start of a reference (a table: a certificate's kilobyte of base64 is
// looked at byte by byte).
var textStop = [256]bool{' ': true, '\t': true, '\n': true, '\r': true, '&': true}

// spaceRef is the length of the character reference at the start of seg
// if it names XML whitespace (&#13; and &#xD; are how Santuario-based
// stacks wrap base64), else 0.
func spaceRef(seg []byte) int {
	if len(seg) < 4 || seg[1] != '#' {
		return 0
	}
	end := bytes.IndexByte(seg[:min(len(seg), 12)], ';')
	if end < 0 {
		return 0
	}
	ds, base := seg[2:end], 10
	if len(ds) > 0 && (ds[0] == 'x' || ds[0] == 'X') {
		ds, base = ds[1:], 16
	}
	if len(ds) == 0 {
		return 0
	}
	v := 0
	for _, d := range ds {
		switch {
		case d >= '0' && d <= '9':
			v = v*base + int(d-'0')
		case base == 16 && (d|0x20) >= 'a' && (d|0x20) <= 'f':
			v = v*base + int(d|0x20-'a'+10)
		default:
			return 0
		}
	}
	if v == ' ' || v == '\t' || v == '\n' || v == '\r' {
		return end + 1
	}
	return 0
}

// signer is the claimed signer's hash, 0 for no claim; token reports
// whether it is a token's text.
func (c *claim) signer(data []byte) (sum uint64, token bool) {
	if c.capture >= 0 { // truncated inside a capture: what was read is no claim
		c.capture = -1
	}
	if c.haveURI && c.uri.end > c.uri.start && data[c.uri.start] == '#' {
		ref := data[c.uri.start+1 : c.uri.end]
		for _, t := range c.tokens[:c.nTokens] {
			if bytes.Equal(data[t.id.start:t.id.end], ref) {
				sum = t.sum
				break
			}
		}
	}
	switch {
	case sum != 0:
		token = true
	case c.nTokens > 0:
		sum, token = c.tokens[0].sum, true
	case c.strAny:
		sum = c.strSum
	default:
		return 0, false
	}
	return max(sum, 1), token // 0 is "no claim"
}
