package template

import (
	"bytes"
	"crypto/subtle"
	"io"
	"slices"

	"github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/swa"
	"github.com/wssgw/wssgw/internal/wss"
)

// SwA References on the template path (WSS SwA Profile 1.1 §5.2, issue
// 14). A ds:Reference whose URI is "cid:..." digests a whole MIME part
// through the Attachment-Content or Attachment-Complete signature
// transform; in a package's template its URI is a slot of classSwA (the
// Content-IDs vary per package) and the Reference a step that streams the
// part through internal/swa's transform into the digest, as the DOM
// engine's swaReference does with the same package. The part is resolved
// with wss.CIDFromURL on every match; a part that does not exist, is named
// twice by one signature or is also included sends the package to the DOM
// engine, which decides. Attachments encrypted by a CipherReference stay
// on the DOM engine (learnablePackage).

// swaRef is one SwA Reference of a template: its URI slot and the index of
// its signature in the result.
type swaRef struct{ slot, sig int }

// isCIDURL reports whether a Reference URI names an attachment, as the
// DOM engine's isCID decides it.
func isCIDURL(uri []byte) bool {
	return len(uri) >= 4 && bytes.EqualFold(uri[:4], []byte("cid:"))
}

// swaReference records an SwA Reference r whose URI is slot k: its one
// transform (the DOM engine admitted exactly one, of the two SwA ones),
// digest method and DigestValue slot.
func (l *learner) swaReference(r, k int) (refStep, error) {
	rs := refStep{swa: true, uri: k, value: -1}
	for c := l.d.FirstChild(r); c >= 0; c = l.d.NextSibling(c) {
		switch l.d.Elements[c].Local {
		case "Transforms":
			tr := l.d.FirstChild(c)
			if tr < 0 || l.d.NextSibling(tr) >= 0 {
				return rs, unsupported("SwA transforms")
			}
			rs.transform = l.attrValue(tr, "Algorithm")
		case "DigestMethod":
			rs.digest = l.attrValue(c, "Algorithm")
		case "DigestValue":
			rs.value = l.textSlot(c)
		}
	}
	if rs.value < 0 || (rs.transform != swa.ContentTransform && rs.transform != swa.CompleteTransform) {
		return rs, unsupported("SwA reference")
	}
	return rs, nil
}

// sigSteps is the number of signatures recorded so far: the index in the
// result of the one being learned.
func (l *learner) sigSteps() int {
	n := 0
	for _, s := range l.t.steps {
		if s.sig != nil {
			n++
		}
	}
	return n
}

// packageFacts checks that the template accounts for every attachment of
// the learned package as the DOM engine did: each included (xop.go) or
// named by SwA References of exactly the signatures that named it.
func (l *learner) packageFacts() error {
	if !l.pkg {
		return nil
	}
	byCID := map[string][]int{}
	for _, sr := range l.t.swa {
		cid, err := wss.CIDFromURL(string(l.d.AttrValue(l.d.FindAttr(l.slots[sr.slot].elem, "", "URI"), nil)))
		if err != nil {
			return unsupported("SwA reference URI: %v", err)
		}
		byCID[cid] = append(byCID[cid], sr.sig)
	}
	for cid, sigs := range byCID {
		at := slices.IndexFunc(l.res.Attachments, func(f wss.AttachmentFact) bool { return f.CID == cid })
		if at < 0 || !l.res.Attachments[at].SwA || !slices.Equal(l.res.Attachments[at].Signatures, sigs) {
			return unsupported("facts of an SwA reference")
		}
	}
	if l.phase == phaseOuter {
		return nil // the inner template accounts for them (xop_enc.go)
	}
	if len(l.t.xop)+l.bodyXOP+len(byCID)+l.cipherParts() != len(l.res.Attachments) {
		return unsupported("attachments neither included nor referenced")
	}
	return nil
}

// swaParts resolves the SwA References' parts (after the includes: a part
// both included and referenced is not a template's).
func (r *run) swaParts() *fallback {
	r.swaCIDs = r.swaCIDs[:0]
	for i, sr := range r.t.swa {
		cid, err := wss.CIDFromURL(string(r.val(sr.slot)))
		if err != nil {
			return &fallback{"SwA reference URI"}
		}
		if _, ok := r.atts.Attachment(cid); !ok {
			return &fallback{"SwA reference to no attachment"}
		}
		if slices.Contains(r.cids, cid) || slices.ContainsFunc(r.bodyInc, func(b bodyInclude) bool { return b.cid == cid }) {
			return &fallback{"attachment included and referenced"}
		}
		for j := range i {
			if r.swaCIDs[j] == cid && r.t.swa[j].sig == sr.sig {
				return &fallback{"attachment referenced twice"}
			}
		}
		r.swaCIDs = append(r.swaCIDs, cid)
	}
	return nil
}

// swaReference checks an SwA Reference: the part streamed through its
// transform into the digest. A part the transform cannot take (malformed
// MIME headers, XML that does not canonicalize) is the DOM engine's to
// refuse.
func (r *run) swaReference(rs *refStep, want []byte) error {
	i := slices.IndexFunc(r.t.swa, func(sr swaRef) bool { return sr.slot == rs.uri })
	a, ok := r.atts.Attachment(r.swaCIDs[i])
	if !ok {
		return &fallback{"attachment vanished"}
	}
	h, err := crypto.NewDigest(rs.digest)
	if err != nil {
		return wss.Wrap(wss.ReasonAlgorithm, err, "DigestMethod")
	}
	w, err := swa.NewWriter(h, rs.transform, a.Header(), swa.Options{Gate: r.e.scanner, MaxXML: wss.MaxBufferedAttachment})
	if err != nil {
		return &fallback{"SwA transform"}
	}
	rd, err := a.Open()
	if err != nil {
		return &fallback{"attachment unreadable"}
	}
	defer rd.Close()
	if _, err := io.Copy(w, rd); err != nil {
		return &fallback{"SwA transform"}
	}
	if err := w.Close(); err != nil {
		return &fallback{"SwA transform"}
	}
	var sum [64]byte
	if subtle.ConstantTimeCompare(h.Sum(sum[:0]), want) != 1 {
		return wss.Failf(wss.ReasonDigest, "digest of an attachment does not match")
	}
	return nil
}
