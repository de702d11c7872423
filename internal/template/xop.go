package template

import (
	"bytes"
	"crypto/subtle"
	"crypto/x509"
	"io"
	"slices"

	"github.com/wssgw/wssgw/internal/c14n"
	"github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/mime"
	"github.com/wssgw/wssgw/internal/wss"
)

// MTOM/XOP packages on the template path (issue 14). The root part of an
// MTOM package is a message like any other but for its xop:Includes: each
// stands for the base64 of a MIME part in every digest over an element
// holding it (XOP 1.0 §3.2, the XOP infoset), and WSS4J's
// storeBytesInAttachment (CXF's default with MTOM on) puts the
// certificate of a BinarySecurityToken into a part the same way. A
// template learned from a package's root has
//
//   - a cid slot for each xop:Include's href (the Content-IDs vary per
//     message), resolved on every match with wss.CIDFromURL, the DOM
//     engine's resolver: a part that does not exist or is included twice
//     sends the message to the DOM engine, which decides (the markup
//     around each include is constant, so an include beside other
//     content or two in one element never match; mime.CheckInclude
//     admitted the learned one);
//   - canonical forms in which each such slot is the part's base64,
//     streamed from the part into the digest, never held in memory;
//   - the attachment facts the DOM engine found (which signatures cover
//     which include, which parts are header values), rebuilt per match
//     in the package's part order, so that the policy's check of
//     attachments (an unreferenced or unsigned part) decides alike.
//
// A package whose Body is encrypted, its CipherValues in parts, is learned
// as two templates like an encrypted message: xop_enc.go.
//
// SwA References (ds:References to cid: URLs digesting whole parts) are
// on the template path too: swa.go. Attachments encrypted by a
// CipherReference (SwA Profile 1.1 §5.5) stay on the DOM engine
// (learnablePackage): measured at 1.16–1.21× their crypto floor at 4–100
// KiB parts, and at 1 MiB what is above the floor is the spool and the
// part's copies, which any engine pays; see docs/performance.md ("Shapes
// that stay on the DOM engine").

// include is one xop:Include of a package template.
type include struct {
	slot int   // the href slot (classCID)
	sigs []int // indices of the signatures covering it (wss.AttachmentFact)
	// consumed: a header value (a BinarySecurityToken's certificate);
	// dropped: consumed and not forwarded (wss.Result.Consumed).
	consumed, dropped bool
}

// learnablePackage refuses the packages whose facts a template does not
// reproduce: encrypted content other than one Body EncryptedData (as
// learnEncrypted), attachments decrypted (SwA §5.5), a part both included
// and named by an SwA Reference, or neither (other than the ciphertext of
// an EncryptedData the decryption removed: xop_enc.go). Their lookups are
// counted as not_applicable.
func learnablePackage(res *wss.Result) error {
	if len(res.Decrypted) > 1 || (len(res.Decrypted) == 1 && res.Decrypted[0].Header) {
		return unsupported("encrypted package")
	}
	for _, f := range res.Attachments {
		if f.Decrypted || (f.XOP && f.SwA) || (!f.XOP && !f.SwA && !cipherPart(&f)) {
			return unsupported("attachment <%s> decrypted, or included and referenced", f.CID)
		}
	}
	return nil
}

// includes records the xop:Includes of a package's root with the facts
// the DOM engine found about their parts. Those of a generic Body are
// found per message; the signatures covering the Body cover them.
func (l *learner) includes() error {
	if !l.pkg {
		return nil
	}
	l.t.sealed = l.phase == phaseOuter
	if l.body >= 0 {
		start := l.d.Elements[l.body].Start
		for k, s := range l.res.Signatures {
			if slices.Contains(s.Covered, start) {
				l.t.bodySigs = append(l.t.bodySigs, k)
			}
		}
	}
	for i := range l.d.Elements {
		if l.d.Elements[i].Space != nsXOP {
			continue
		}
		if l.inBody(i) {
			href, err := mime.CheckInclude(l.d, i)
			if err != nil {
				return unsupported("xop:Include: %v", err)
			}
			cid, err := wss.CIDFromURL(href)
			if err != nil {
				return unsupported("xop:Include href: %v", err)
			}
			at := slices.IndexFunc(l.res.Attachments, func(f wss.AttachmentFact) bool { return f.CID == cid })
			if at < 0 || !slices.Equal(l.res.Attachments[at].Signatures, l.t.bodySigs) || l.res.Attachments[at].Consumed {
				return unsupported("facts of a Body's xop:Include")
			}
			l.bodyXOP++
			continue
		}
		k := l.attrSlot(i, "href")
		if k < 0 || l.slots[k].class != classCID {
			return unsupported("xop:Include href")
		}
		cid, err := wss.CIDFromURL(string(l.value(k)))
		if err != nil {
			return unsupported("xop:Include href: %v", err)
		}
		at := slices.IndexFunc(l.res.Attachments, func(f wss.AttachmentFact) bool { return f.CID == cid })
		if l.phase == phaseOuter {
			// The received root of an encrypted package: its includes
			// are resolved here, the facts are the plaintext message's
			// (the inner template's, xop_enc.go).
			if at < 0 {
				return unsupported("xop:Include of no attachment")
			}
			l.t.xop = append(l.t.xop, include{slot: k})
			continue
		}
		if at < 0 || !l.res.Attachments[at].XOP {
			return unsupported("xop:Include of no attachment")
		}
		f := &l.res.Attachments[at]
		l.t.xop = append(l.t.xop, include{slot: k, sigs: slices.Clone(f.Signatures), consumed: f.Consumed,
			dropped: slices.Contains(l.res.Consumed, cid)})
	}
	return nil
}

// includeIn returns the index in t.xop of the xop:Include that is element
// i's only content, or -1.
func (l *learner) includeIn(i int) int {
	e := &l.d.Elements[i]
	if !l.pkg || e.Next != i+2 || !l.is(i+1, nsXOP, "Include") {
		return -1
	}
	k := l.attrSlot(i+1, "href")
	return slices.IndexFunc(l.t.xop, func(inc include) bool { return inc.slot == k })
}

// canonical is element i's canonical form in the marked copy; in a
// package's root every xop:Include is its href slot's marker, which the
// run replaces by the part's base64 (XOP infoset, as the DOM engine's
// xopReplacer digests it).
func (l *learner) canonical(i int, alg string, prefixes []string) ([]byte, error) {
	if !l.pkg {
		return c14n.Canonicalize(alg, l.md, i, prefixes, nil)
	}
	var b bytes.Buffer
	err := c14n.CanonicalizeToReplacing(&b, alg, l.md, i, prefixes, func(elem int) (func(io.Writer) error, bool) {
		if l.md.Elements[elem].Space != nsXOP {
			return nil, false
		}
		k := l.attrSlot(elem, "href")
		return func(w io.Writer) error {
			_, err := io.WriteString(w, markerOf(k))
			return err
		}, true
	})
	return b.Bytes(), err
}

// attachments resolves a package template's xop:Includes against the
// package and builds its attachment facts. A template learned from a
// package runs only on a package's root, a plain one only on a plain
// message.
func (r *run) attachments() *fallback {
	t := r.t
	if t.pkg != (r.atts != nil) {
		return &fallback{"package and plain message"}
	}
	if !t.pkg {
		return nil
	}
	r.cids = r.cids[:0]
	for _, inc := range t.xop {
		cid, err := wss.CIDFromURL(string(r.val(inc.slot)))
		if err != nil {
			return &fallback{"xop:Include href"}
		}
		if f := r.includable(cid, len(r.bodyInc)); f != nil {
			return f
		}
		r.cids = append(r.cids, cid)
	}
	for j, inc := range r.bodyInc {
		if f := r.includable(inc.cid, j); f != nil {
			return f
		}
	}
	if f := r.swaParts(); f != nil {
		return f
	}
	if t.sealed {
		return nil // the inner template's (xop_enc.go)
	}
	ids := r.atts.IDs()
	r.res.Attachments = make([]wss.AttachmentFact, 0, len(ids))
	for i, id := range ids {
		if slices.Contains(ids[:i], id) {
			return &fallback{"two attachments with one Content-ID"}
		}
		f := wss.AttachmentFact{CID: id}
		if k := slices.Index(r.cids, id); k >= 0 {
			inc := &t.xop[k]
			f.XOP, f.Consumed, f.Signatures = true, inc.consumed, slices.Clone(inc.sigs)
			if inc.dropped {
				r.res.Consumed = append(r.res.Consumed, id)
			}
		} else if slices.ContainsFunc(r.bodyInc, func(b bodyInclude) bool { return b.cid == id }) {
			f.XOP, f.Signatures = true, slices.Clone(t.bodySigs)
		} else if slices.Contains(r.ciphered, id) {
			// The EncryptedData's ciphertext, gone with it: consumed,
			// never forwarded (xop_enc.go).
			f.Consumed = true
			r.res.Consumed = append(r.res.Consumed, id)
		} else {
			for i, cid := range r.swaCIDs {
				if cid == id && !slices.Contains(f.Signatures, t.swa[i].sig) {
					f.SwA, f.Signatures = true, append(f.Signatures, t.swa[i].sig)
				}
			}
		}
		r.res.Attachments = append(r.res.Attachments, f)
	}
	return nil
}

// includable reports, for the next xop:Include resolved, whether cid names
// a part of the package that no include before it named (the header's in
// r.cids, the first body ones of the Body's).
func (r *run) includable(cid string, body int) *fallback {
	if _, ok := r.atts.Attachment(cid); !ok {
		return &fallback{"xop:Include of no attachment"}
	}
	if slices.Contains(r.cids, cid) || slices.ContainsFunc(r.bodyInc[:body], func(b bodyInclude) bool { return b.cid == cid }) {
		return &fallback{"attachment included twice"}
	}
	if slices.Contains(r.ciphered, cid) {
		// The plaintext names the ciphertext it came from: the DOM
		// engine's to refuse (indexXOP).
		return &fallback{"xop:Include of ciphertext"}
	}
	return nil
}

// bodyInclude is an xop:Include inside a generic Body: its element in the
// gated message and the Content-ID its href names.
type bodyInclude struct {
	elem int
	cid  string
}

// bodyIncludes checks every xop:Include of a generic Body by the XOP rules
// (mime.CheckInclude, the DOM engine's) and resolves its href; whether the
// parts exist and are named once is for attachments.
func (r *run) bodyIncludes() *fallback {
	d, b := &r.doc, r.t.gbody.elem
	r.bodyInc = r.bodyInc[:0]
	for i := b + 1; i < d.Elements[b].Next; i++ {
		if d.Elements[i].Space != nsXOP {
			continue
		}
		href, err := mime.CheckInclude(d, i)
		if err != nil {
			return &fallback{"xop:Include"}
		}
		cid, err := wss.CIDFromURL(href)
		if err != nil {
			return &fallback{"xop:Include href"}
		}
		r.bodyInc = append(r.bodyInc, bodyInclude{elem: i, cid: cid})
	}
	return nil
}

// xopBodyDigest is bodyDigest for a generic Body holding xop:Includes: its
// canonical form streamed into the digest over the gated message, each
// include as its part's base64 (c14n's Replacer, as the DOM engine's
// xopReplacer), in the learned form first, then the other.
func (r *run) xopBodyDigest(rs *refStep, want []byte) error {
	for _, lines := range [2]bool{rs.lines, !rs.lines} {
		h, err := crypto.NewDigest(rs.digest)
		if err != nil {
			return wss.Wrap(wss.ReasonAlgorithm, err, "DigestMethod")
		}
		if err := c14n.CanonicalizeToReplacing(h, rs.alg, &r.doc, r.t.gbody.elem, rs.prefixes, r.bodyReplacer(lines)); err != nil {
			// The DOM engine would fail the same way or otherwise: its
			// verdict.
			return &fallback{"body c14n"}
		}
		var sum [64]byte
		if subtle.ConstantTimeCompare(h.Sum(sum[:0]), want) == 1 {
			if lines != rs.lines {
				r.flipped = append(r.flipped, rs)
			}
			return nil
		}
	}
	return wss.Failf(wss.ReasonDigest, "digest does not match")
}

func (r *run) bodyReplacer(lines bool) c14n.Replacer {
	return func(elem int) (func(io.Writer) error, bool) {
		k := slices.IndexFunc(r.bodyInc, func(b bodyInclude) bool { return b.elem == elem })
		if k < 0 {
			return nil, false
		}
		return func(w io.Writer) error {
			a, ok := r.atts.Attachment(r.bodyInc[k].cid)
			if !ok {
				return &fallback{"attachment vanished"}
			}
			return encodePart(a, w, lines)
		}, true
	}
}

// attachmentOf returns the attachment of include slot k.
func (r *run) attachmentOf(k int) (wss.Attachment, *fallback) {
	i := slices.IndexFunc(r.t.xop, func(inc include) bool { return inc.slot == k })
	if i < 0 || i >= len(r.cids) {
		return nil, &fallback{"include slot"}
	}
	a, ok := r.atts.Attachment(r.cids[i])
	if !ok {
		return nil, &fallback{"attachment vanished"}
	}
	return a, nil
}

// tokenCertificate is the certificate of a BinarySecurityToken held in the
// part of include index i, read whole within wss.MaxTokenPart (a larger
// part is the DOM engine's to refuse).
func (r *run) tokenCertificate(i int) (*x509.Certificate, error) {
	a, f := r.attachmentOf(r.t.xop[i].slot)
	if f != nil {
		return nil, f
	}
	if a.Size() > wss.MaxTokenPart {
		return nil, &fallback{"token part size"}
	}
	rd, err := a.Open()
	if err != nil {
		return nil, &fallback{"token part unreadable"}
	}
	defer rd.Close()
	der, err := io.ReadAll(io.LimitReader(rd, wss.MaxTokenPart+1))
	if err != nil || len(der) > wss.MaxTokenPart {
		return nil, &fallback{"token part unreadable"}
	}
	return r.e.certificateDER(der)
}

// xopReference checks a Reference whose canonical form holds xop:Includes:
// the canonical form is streamed into the digest, each include as its
// part's base64, first in the form the signer used when the template was
// learned, then in the other: the DOM engine accepts either (dom's
// xopDigest), so a package signed the other way verifies alike, at the
// cost of a second pass.
func (r *run) xopReference(rs *refStep, want []byte) error {
	for _, lines := range [2]bool{rs.lines, !rs.lines} {
		h, err := crypto.NewDigest(rs.digest)
		if err != nil {
			return wss.Wrap(wss.ReasonAlgorithm, err, "DigestMethod")
		}
		if err := r.canonXOP(h, rs.canon, lines); err != nil {
			return err
		}
		var sum [64]byte
		if subtle.ConstantTimeCompare(h.Sum(sum[:0]), want) == 1 {
			if lines != rs.lines {
				r.flipped = append(r.flipped, rs)
			}
			return nil
		}
	}
	return wss.Failf(wss.ReasonDigest, "digest does not match")
}

// canonXOP writes a canonical form to w with each include slot's part
// base64-encoded in place (one line, or MIME lines), the literals between
// them collected in r.part.
func (r *run) canonXOP(w io.Writer, ps []piece, lines bool) error {
	buf := r.part[:0]
	defer func() { r.part = buf }()
	for _, p := range ps {
		buf = append(buf, r.t.lit(p)...)
		if p.slot == noSlot {
			continue
		}
		if r.t.slots[p.slot].class != classCID {
			buf = append(buf, r.slotCanon(int(p.slot))...)
			continue
		}
		if _, err := w.Write(buf); err != nil {
			return err
		}
		buf = buf[:0]
		a, f := r.attachmentOf(int(p.slot))
		if f != nil {
			return f
		}
		if err := encodePart(a, w, lines); err != nil {
			return wss.Wrap(wss.ReasonMalformed, err, "canonicalizing an included attachment")
		}
	}
	_, err := w.Write(buf)
	return err
}

func encodePart(a wss.Attachment, w io.Writer, lines bool) error {
	rd, err := a.Open()
	if err != nil {
		return err
	}
	defer rd.Close()
	if lines {
		return mime.EncodeXOP(rd, nil, w)
	}
	return mime.EncodeXOP(rd, w, nil)
}
