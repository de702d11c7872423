package wss

import (
	"context"
	"crypto/sha256"
	"encoding/xml"
	"math"
	"time"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/crypto"
)

// Check requires every item of the policy to be backed by a verified fact of
// r, then records the message in the replay store. It runs after the engine
// and is the same for both engines.
func (p *Policy) Check(ctx context.Context, r *Result, now time.Time) error {
	if err := p.CheckFacts(r); err != nil {
		return err
	}
	return p.checkReplay(ctx, r, now)
}

// CheckFacts is Check without the replay store: whether the facts meet the
// policy's requirements. The template automaton learns only from messages
// that do.
func (p *Policy) CheckFacts(r *Result) error {
	c := p.Config
	if c.Has(config.RequireSignature) && len(r.Signatures) == 0 {
		return Failf(ReasonMissing, "no signature")
	}
	if c.Has(config.RequireTimestamp) && r.Timestamp == nil {
		return Failf(ReasonMissing, "no timestamp")
	}
	if c.Has(config.RequireUsernameToken) && r.Username == nil {
		return Failf(ReasonMissing, "no username token")
	}
	if c.Has(config.RequireEncryption) && len(r.Decrypted) == 0 && !r.decryptedAttachments() {
		return Failf(ReasonMissing, "nothing was encrypted")
	}
	if c.Has(config.RequireSignature) && r.Signer() == nil {
		// An HMAC signature proves possession of a key the message itself
		// transported (an EncryptedKey anyone can make for wssgw's
		// certificate); a policy requiring a signature wants a trusted
		// signer. Such a message passes a policy that requires encryption
		// or a UsernameToken instead, its HMAC verified but vouching for
		// no one.
		return Failf(ReasonPolicy, "no signature by a trusted certificate")
	}
	for _, part := range p.Signed {
		// Only a trusted signer's signature covers a required part: an
		// unauthenticated HMAC signature over the Body next to a trusted
		// signature over the Timestamp alone must not pass.
		if err := p.requireCovered(r, part, r.SignedByTrusted, "signed"); err != nil {
			return err
		}
	}
	for _, part := range p.Encrypted {
		if err := p.requireCovered(r, part, r.DecryptedAt, "encrypted"); err != nil {
			return err
		}
	}
	if err := p.checkAttachments(r); err != nil {
		return err
	}
	return p.checkUnsigned(r)
}

// requireCovered checks one required part by node identity: the element the
// backend will get as this part must be one the fact covers.
func (p *Policy) requireCovered(r *Result, part xml.Name, covered func(int) bool, what string) error {
	var starts []int
	switch part {
	case PartBody:
		starts = []int{r.Body}
	case PartTimestamp:
		if r.Timestamp == nil {
			return Failf(ReasonPolicy, "Timestamp must be %s but is absent", what)
		}
		starts = []int{r.Timestamp.Start}
	case PartUsername:
		if r.Username == nil {
			return Failf(ReasonPolicy, "UsernameToken must be %s but is absent", what)
		}
		starts = []int{r.Username.Start}
	case PartToken:
		if r.Token < 0 {
			return Failf(ReasonPolicy, "BinarySecurityToken must be %s but is absent", what)
		}
		starts = []int{r.Token}
	default:
		// WS-SecurityPolicy SignedParts/Header: every such header block
		// present must be covered.
		for _, h := range r.Headers {
			if h.Name == part {
				starts = append(starts, h.Start)
			}
		}
	}
	for _, s := range starts {
		if !covered(s) {
			return Failf(ReasonPolicy, "%s {%s}%s is not %s", partLabel(part), part.Space, part.Local, what)
		}
	}
	return nil
}

func partLabel(n xml.Name) string {
	if n.Space == partSpace {
		return "part"
	}
	return "header"
}

// NeedsSignature reports whether CheckFacts refuses every message without
// a trusted X.509 signature: the policy requires a signature, or a part
// that is always present (Body) or must be present (Timestamp,
// UsernameToken, BinarySecurityToken) to be signed. A required header
// block need not be signed when absent, so it does not count. Engines use
// it to refuse a message with no ds:Signature before any key is used.
func (p *Policy) NeedsSignature() bool {
	if p.Config.Has(config.RequireSignature) {
		return true
	}
	for _, part := range p.Signed {
		if part.Space == partSpace {
			return true
		}
	}
	return false
}

// NeedsSignedBody reports whether CheckFacts requires a trusted signature
// over the Body.
func (p *Policy) NeedsSignedBody() bool {
	for _, part := range p.Signed {
		if part == PartBody {
			return true
		}
	}
	return false
}

// checkReplay records each verified signature and the UsernameToken nonce
// (DESIGN.md §5.7). A signature is keyed on what was signed and the value
// that signs it: SHA-256("sig\0" || SHA-256(canonical SignedInfo) ||
// SignatureValue). Nothing of the token is in the key: the certificate is
// not signed (a BinarySecurityToken can be swapped for another certificate
// of the same key, a same-key renewal, or re-encoded) and a key that
// changed with it would accept the same signed message again. The
// SignatureValue keeps two partners' signatures over an identical
// SignedInfo apart; it is taken in its canonical form, since an ECDSA
// value has a second valid form anyone can compute
// (crypto.CanonicalSignatureValue).
func (p *Policy) checkReplay(ctx context.Context, r *Result, now time.Time) error {
	if p.replay == nil {
		return nil
	}
	expires := p.replayExpiry(r, now)
	for _, s := range r.Signatures {
		if err := p.seen(ctx, signatureReplayKey(&s), expires); err != nil {
			return err
		}
	}
	if u := r.Username; u != nil && u.Nonce != nil {
		h := sha256.New()
		h.Write([]byte("nonce\x00"))
		h.Write([]byte(u.Username))
		h.Write([]byte{0})
		h.Write(u.Nonce)
		// CheckUsernameCreated refused a Created after now+FutureSkew, so
		// this is at most now+UsernameToken.MaxAge+2×FutureSkew.
		ue := u.Created.Add(addDurations(p.Config.UsernameToken.MaxAge, p.Config.Timestamp.FutureSkew))
		if !ue.After(now) {
			ue = now.Add(time.Second)
		}
		if err := p.seen(ctx, h.Sum(nil), ue); err != nil {
			return err
		}
	}
	// After Seen: a Redis store finds out it lost its keys in the same
	// round trip, so the Reset is already there for this message.
	return p.checkReset(r, now)
}

// ResetWindow is how long after a replay store lost its keys (a Reset) a
// message accepted before the loss could still pass policy c: the
// longest a key is remembered, MaxAge+2×FutureSkew from the time it was
// recorded (replayExpiry; the UsernameToken nonce's term is the same with
// its own MaxAge). After it, such a message fails the timestamp checks
// anyway, or its key would have expired too.
func ResetWindow(c config.Policy) time.Duration {
	skew := c.Timestamp.FutureSkew
	return addDurations(addDurations(max(c.Timestamp.MaxAge, c.UsernameToken.MaxAge), skew), skew)
}

// checkReset refuses, within ResetWindow after the replay store last lost
// its keys, a message that could have been accepted before the loss: its
// replay-store keys may be gone, so "not seen" proves nothing (issue 16).
// A message is dated by its Timestamp's Created (signatures) and its
// UsernameToken's Created (the nonce): it passes only if those are after
// the loss (at start-up: not before its second). When the loss happened under running gateways (live), a
// message accepted just before it may carry a Created up to FutureSkew
// later (CheckTimestamp allows that much), so the cut-off moves by
// FutureSkew. A message with nothing to date it is refused within the
// window.
func (p *Policy) checkReset(r *Result, now time.Time) error {
	if p.resets == nil {
		return nil
	}
	at, live := p.resets.LastReset()
	if at.IsZero() || !now.Before(at.Add(ResetWindow(p.Config))) {
		return nil
	}
	// Created is often written to the second: a message created in the
	// second the store started empty is not refused for its truncation
	// (the process that could have accepted it before had stopped before
	// this one started). A live loss gets no such allowance.
	cutoff := at.Truncate(time.Second).Add(-time.Nanosecond)
	if live {
		cutoff = at.Add(p.Config.Timestamp.FutureSkew)
	}
	if len(r.Signatures) > 0 {
		if r.Timestamp == nil {
			return Failf(ReasonStoreReset, "no Timestamp within the window after the replay store lost its keys at %s", at.UTC().Format(time.RFC3339Nano))
		}
		if !r.Timestamp.Created.After(cutoff) {
			return Failf(ReasonStoreReset, "Created %s is not after %s: the replay store lost its keys at %s",
				r.Timestamp.Created.UTC().Format(time.RFC3339Nano), cutoff.UTC().Format(time.RFC3339Nano), at.UTC().Format(time.RFC3339Nano))
		}
	}
	if u := r.Username; u != nil && u.Nonce != nil && !u.Created.After(cutoff) {
		return Failf(ReasonStoreReset, "UsernameToken Created %s is not after %s: the replay store lost its keys at %s",
			u.Created.UTC().Format(time.RFC3339Nano), cutoff.UTC().Format(time.RFC3339Nano), at.UTC().Format(time.RFC3339Nano))
	}
	return nil
}

// signatureReplayKey is the replay store key of a verified signature
// (checkReplay).
func signatureReplayKey(s *Signature) []byte {
	var key any
	if s.Signer != nil && s.Signer.Certificate != nil {
		key = s.Signer.Certificate.PublicKey
	}
	h := sha256.New()
	h.Write([]byte("sig\x00"))
	h.Write(s.SignedInfoDigest[:])
	h.Write(crypto.CanonicalSignatureValue(key, s.SignatureValue))
	return h.Sum(nil)
}

// replayExpiry is how long a message's signatures are remembered: until
// it could no longer pass the Timestamp check (CheckTimestamp), with one
// FutureSkew more for replicas whose clocks run behind this one's. That
// is Created+MaxAge+FutureSkew, or Expires+FutureSkew when later; without
// a Timestamp, MaxAge+FutureSkew from now.
//
// It is clamped to now+MaxAge+2×FutureSkew. CheckTimestamp refused a
// Created after now+FutureSkew and refuses, at any later time, a Created
// older than MaxAge, so no check after Created+MaxAge ≤ now+FutureSkew+
// MaxAge accepts the message whatever its Expires says: remembering it
// longer protects nothing. The clamp never shortens the Created term. It
// bounds an Expires in the year 9999 (which would also overflow the stores'
// int64 nanoseconds past 2262) to minutes.
func (p *Policy) replayExpiry(r *Result, now time.Time) time.Time {
	tp := p.Config.Timestamp
	window := addDurations(tp.MaxAge, tp.FutureSkew)
	expires := now.Add(window)
	if r.Timestamp != nil {
		expires = r.Timestamp.Created.Add(window)
		if e := r.Timestamp.Expires; !e.IsZero() && e.Add(tp.FutureSkew).After(expires) {
			expires = e.Add(tp.FutureSkew)
		}
	}
	if limit := now.Add(addDurations(window, tp.FutureSkew)); expires.After(limit) {
		expires = limit
	}
	if !expires.After(now) {
		expires = now.Add(time.Second)
	}
	return expires
}

// addDurations adds non-negative durations, saturating instead of
// wrapping around to a negative sum for absurd configured values.
func addDurations(a, b time.Duration) time.Duration {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func (p *Policy) seen(ctx context.Context, key []byte, expires time.Time) error {
	replayed, err := p.replay.Seen(ctx, key, expires)
	switch {
	case err != nil:
		// Fail closed: an unavailable store must not become "not seen".
		return Wrap(ReasonReplayStore, err, "replay store")
	case replayed:
		return Failf(ReasonReplay, "message seen before")
	}
	return nil
}
