package wss

import (
	"encoding/xml"
	"slices"

	"github.com/wssgw/wssgw/internal/config"
)

// What reaches the backend of a secured route: the verified envelope,
// without our Security header (unless keepSecurityHeader), without the
// header blocks and Envelope/Header attributes that no trusted X.509
// signature covers (unless the policy forwards them or allows their name),
// and without comments. This file is that one rule: Policy.unsigned decides
// what is unsigned, CheckFacts rejects it in reject mode, Forward leaves it
// out in strip mode.

// Kinds of unsigned content: the kind label of
// wssgw_unsigned_stripped_total.
const (
	UnsignedHeader    = "header"
	UnsignedAttribute = "attribute"
	UnsignedComment   = "comment"
)

// Unsigned is content of the envelope that no trusted signature covers.
type Unsigned struct {
	Kind string
	Name xml.Name // zero for a comment
	Span [2]int   // in Result.Document
}

// unsignedRule is a policy's unsignedHeaders mode and allow-list.
type unsignedRule struct {
	mode  string
	allow map[xml.Name]bool
}

func compileUnsigned(p config.Policy) unsignedRule {
	u := unsignedRule{mode: p.UnsignedHeaders, allow: map[xml.Name]bool{}}
	if u.mode == "" {
		u.mode = config.UnsignedStrip // the default, for policies built in code
	}
	for _, q := range p.UnsignedAllow {
		if space, local, ok := config.ParseQName(q); ok {
			u.allow[xml.Name{Space: space, Local: local}] = true
		}
	}
	return u
}

// unsigned lists the header blocks and the Envelope and Header attributes
// of r that no trusted X.509 signature covers and the allow-list does not
// name, in document order within each kind.
//
// A header block is signed when a signature with a trusted X.509 signer
// covers the block itself (SignedByTrusted on its start): a signed
// descendant does not vouch for the rest of the block, an HMAC signature
// keyed by an EncryptedKey vouches for no one, and encryption alone says
// nothing about who wrote a block (anyone can encrypt for wssgw's
// certificate). Our Security header is not in r.Headers: Forward removes
// it (or keepSecurityHeader forwards it as verified).
//
// An attribute of Envelope or Header is never covered: every signature
// wssgw verifies lives in the Security header inside soap:Header, and the
// only transforms accepted are exclusive c14n and the STR-Transform (no
// enveloped-signature transform, BSP R5412, R5416), so a digest over the
// Header or the Envelope would include its own SignatureValue.
func (p *Policy) unsigned(r *Result) []Unsigned {
	var out []Unsigned
	for _, h := range r.Headers {
		if !r.SignedByTrusted(h.Start) && !p.unsignedRule.allow[h.Name] {
			out = append(out, Unsigned{Kind: UnsignedHeader, Name: h.Name, Span: [2]int{h.Start, h.End}})
		}
	}
	for _, a := range r.Attributes {
		if !p.unsignedRule.allow[a.Name] {
			out = append(out, Unsigned{Kind: UnsignedAttribute, Name: a.Name, Span: a.Span})
		}
	}
	return out
}

// checkUnsigned is the reject mode: a message carrying unsigned content
// the allow-list does not name is refused, before the replay store records
// it. Comments are not refused: Forward removes them in every mode.
func (p *Policy) checkUnsigned(r *Result) error {
	if p.unsignedRule.mode != config.UnsignedReject {
		return nil
	}
	if u := p.unsigned(r); len(u) > 0 {
		return Failf(ReasonUnsigned, "%s {%s}%s is not signed", u[0].Kind, u[0].Name.Space, u[0].Name.Local)
	}
	return nil
}

// Forward returns the bytes to send to the backend under policy p, and
// what it left out besides our Security header: the plaintext envelope
// without our Security header unless keepSecurityHeader is set, without
// the unsigned header blocks and attributes in strip mode, and without any
// comment (in signed content the engines refuse comments, so every one
// left is outside signed content: XML comments split text differently for
// different consumers, security.md A9, and a backend gets none that nobody
// signed). Comments inside a removed block go with it.
// What remains are verified bytes: the document passed the gate after
// decryption and the engine checked its structure (DESIGN.md §5.4). It
// copies once, into a buffer of the exact size, and not at all when
// nothing is left out.
func (r *Result) Forward(p *Policy) ([]byte, []Unsigned) { return r.forward(p, false) }

// forward is Forward, in place for a caller that owns Document and has no
// further use for it (Policy.VerifyOwned): what is left out is cut by
// moving the bytes within Document, without allocating (issue 14: every
// verified request was copied once more to drop its Security header,
// 1 MiB for a 1 MiB request). Document and the result's offsets are void
// afterwards.
func (r *Result) forward(p *Policy, inPlace bool) ([]byte, []Unsigned) {
	var cut []Unsigned
	if p.unsignedRule.mode == config.UnsignedStrip {
		cut = p.unsigned(r)
	}
	security := !p.Config.KeepSecurityHeader && r.Security[0] >= 0
	if len(cut)+len(r.Comments) == 0 {
		// The common case: at most the Security header goes.
		if !security {
			return r.Document, nil
		}
		s := r.Security
		if inPlace {
			return cutInPlace(r.Document, s), nil
		}
		out := make([]byte, 0, len(r.Document)-(s[1]-s[0]))
		return append(append(out, r.Document[:s[0]]...), r.Document[s[1]:]...), nil
	}
	if security {
		cut = append(cut, Unsigned{Span: r.Security}) // Kind "": not reported
	}
	for _, c := range r.Comments {
		cut = append(cut, Unsigned{Kind: UnsignedComment, Span: c})
	}
	slices.SortStableFunc(cut, func(a, b Unsigned) int { return a.Span[0] - b.Span[0] })
	// Spans are nested (a comment inside a header block) or disjoint:
	// keep the outermost ones.
	kept, end, n := cut[:0], -1, 0
	for _, c := range cut {
		if c.Span[0] < end {
			continue
		}
		kept = append(kept, c)
		end = c.Span[1]
		n += c.Span[1] - c.Span[0]
	}
	var out []byte
	if inPlace {
		// Each kept run moves left over what was cut before it: append
		// copies with memmove, which overlapping runs need.
		out = r.Document[:0]
	} else {
		out = make([]byte, 0, len(r.Document)-n)
	}
	pos := 0
	var stripped []Unsigned
	for _, c := range kept {
		out = append(out, r.Document[pos:c.Span[0]]...)
		pos = c.Span[1]
		if c.Kind != "" {
			stripped = append(stripped, c)
		}
	}
	return append(out, r.Document[pos:]...), stripped
}

// cutInPlace removes d[s[0]:s[1]] by moving the shorter side over it: the
// Security header sits near the start, so usually only the envelope's
// first few hundred bytes move and the rest of d is forwarded as it is.
func cutInPlace(d []byte, s [2]int) []byte {
	if s[0] <= len(d)-s[1] {
		n := s[1] - s[0]
		copy(d[n:s[1]], d[:s[0]])
		return d[n:]
	}
	return append(d[:s[0]], d[s[1]:]...)
}
