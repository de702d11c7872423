package wss

import (
	"context"
	"crypto/sha256"
	"encoding/xml"
	"time"

	"github.com/wssgw/wssgw/internal/config"
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

// checkReplay records each verified signature (keyed on the canonical
// SignedInfo digest plus the signer, DESIGN.md §5.7) and the UsernameToken
// nonce. Entries live until the message could no longer pass the Timestamp
// check anyway.
func (p *Policy) checkReplay(ctx context.Context, r *Result, now time.Time) error {
	if p.replay == nil {
		return nil
	}
	expires := now.Add(p.Config.Timestamp.MaxAge + p.Config.Timestamp.FutureSkew)
	if r.Timestamp != nil {
		expires = r.Timestamp.Created.Add(p.Config.Timestamp.MaxAge + p.Config.Timestamp.FutureSkew)
		if e := r.Timestamp.Expires; !e.IsZero() && e.Add(p.Config.Timestamp.FutureSkew).After(expires) {
			expires = e.Add(p.Config.Timestamp.FutureSkew)
		}
	}
	if !expires.After(now) {
		expires = now.Add(time.Second)
	}
	for _, s := range r.Signatures {
		h := sha256.New()
		h.Write([]byte("sig\x00"))
		h.Write(s.SignedInfoDigest[:])
		if s.Signer != nil {
			h.Write([]byte(s.Signer.SHA256))
		}
		if err := p.seen(ctx, h.Sum(nil), expires); err != nil {
			return err
		}
	}
	if u := r.Username; u != nil && u.Nonce != nil {
		h := sha256.New()
		h.Write([]byte("nonce\x00"))
		h.Write([]byte(u.Username))
		h.Write([]byte{0})
		h.Write(u.Nonce)
		ue := u.Created.Add(p.Config.UsernameToken.MaxAge + p.Config.Timestamp.FutureSkew)
		if !ue.After(now) {
			ue = now.Add(time.Second)
		}
		if err := p.seen(ctx, h.Sum(nil), ue); err != nil {
			return err
		}
	}
	return nil
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
