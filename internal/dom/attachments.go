package dom

import (
	"time"

	"github.com/wssgw/wssgw/internal/wss"
)

// ProcessAttachments is Process for an MTOM/SwA package: data is the root
// part, atts the other parts. On top of Process it
//
//   - digests a signed element holding xop:Include elements as its XOP
//     infoset (W3C XOP 1.0 §3.2: each xop:Include stands for the base64 of
//     its part), streaming the part through the digest;
//   - verifies SwA References (URI "cid:...", WSS SwA Profile 1.1 §5.2)
//     with the Attachment-Content or Attachment-Complete signature
//     transform;
//   - reads a CipherValue given by xop:Include from its part (WSS4J
//     storeBytesInAttachment) and records the part as consumed;
//   - decrypts attachments named by an EncryptedData of Type
//     Attachment-Content-Only or Attachment-Complete with a CipherReference
//     (SwA §5.5), handing the plaintext to atts.Replace;
//
// and records one wss.AttachmentFact per attachment for Check.
//
// Order follows the Security header as for XML content (WSS 1.1 §5): a
// Signature before the EncryptedData of an attachment digests the
// ciphertext (encrypt-then-sign: the plaintext is covered the way a
// decrypted element inside a signed element is); one after it digests the
// plaintext that Replace installed (sign-then-encrypt, WSS4J's order).
func (e *Engine) ProcessAttachments(data []byte, atts wss.Attachments, p *wss.Policy, now time.Time) (*wss.Result, error) {
	return e.run(data, atts, p, now, true)
}

// attachmentState is the attachment side of one ProcessAttachments call.
type attachmentState struct {
	atts wss.Attachments
	// fact indexes res.Attachments by Content-ID.
	fact map[string]int
	// xop maps the gate index of each xop:Include of the current document
	// to the Content-ID it names (rebuilt by every load).
	xop map[int]string
	// ciphered are parts named by a CipherReference or holding a
	// CipherValue: nothing else may include them.
	ciphered map[string]bool
}

// initAttachments records one fact per attachment; a Content-ID twice is a
// package two parts of which claim one name.
func (m *message) initAttachments(atts wss.Attachments) error {
	ids := atts.IDs()
	m.att = &attachmentState{atts: atts, fact: make(map[string]int, len(ids)), ciphered: map[string]bool{}}
	m.res.Attachments = make([]wss.AttachmentFact, 0, len(ids))
	for _, id := range ids {
		if _, dup := m.att.fact[id]; dup {
			return wss.Failf(wss.ReasonStructure, "two attachments with Content-ID <%s>", id)
		}
		m.att.fact[id] = len(m.res.Attachments)
		m.res.Attachments = append(m.res.Attachments, wss.AttachmentFact{CID: id})
	}
	return nil
}

// attachment returns the part a cid: URI names and its fact. Without
// attachments (Process) every cid: URI fails: there is nothing it could
// name, and nothing is ever fetched (DESIGN.md §5.8).
func (m *message) attachment(uri string) (wss.Attachment, *wss.AttachmentFact, error) {
	if m.att == nil {
		return nil, nil, wss.Failf(wss.ReasonReference, "cid: reference in a message without attachments")
	}
	cid, err := wss.CIDFromURL(uri)
	if err != nil {
		return nil, nil, wss.Wrap(wss.ReasonReference, err, "attachment reference")
	}
	i, ok := m.att.fact[cid]
	a, found := m.att.atts.Attachment(cid)
	if !ok || !found {
		return nil, nil, wss.Failf(wss.ReasonReference, "reference to an unknown attachment")
	}
	return a, &m.res.Attachments[i], nil
}

// attachmentFacts fills in, from the final document, which attachments an
// xop:Include names and which signatures cover them: a signature covers an
// included part when it covers a proper ancestor of the xop:Include, whose
// digest was then taken over the XOP infoset (reference, xopReplacer).
// Signatures are matched by node identity (start offsets that followed
// every splice), as for required parts (DESIGN.md §5.3).
func (m *message) attachmentFacts() {
	if m.att == nil {
		return
	}
	for inc, cid := range m.att.xop {
		f := &m.res.Attachments[m.att.fact[cid]]
		f.XOP = true
		for a := m.doc.Elements[inc].Parent; a >= 0; a = m.doc.Elements[a].Parent {
			for k := range m.res.Signatures {
				if covers(&m.res.Signatures[k], m.start(a)) {
					f.Signatures = appendOnce(f.Signatures, k)
				}
			}
		}
	}
	m.tokenParts()
	kept := m.keptParts()
	for i := range m.res.Attachments {
		if f := &m.res.Attachments[i]; f.Consumed && !kept[f.CID] {
			m.res.Consumed = append(m.res.Consumed, f.CID)
		}
	}
}

func covers(s *wss.Signature, start int) bool {
	for _, c := range s.Covered {
		if c == start {
			return true
		}
	}
	return false
}

func appendOnce(s []int, k int) []int {
	for _, v := range s {
		if v == k {
			return s
		}
	}
	return append(s, k)
}
