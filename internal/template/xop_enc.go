package template

import (
	"io"
	"slices"

	"github.com/wssgw/wssgw/internal/wss"
)

// Encrypted MTOM/XOP packages on the template path (issue 14). With MTOM
// on, CXF sets WSS4J's storeBytesInAttachment: the octets of every
// xenc:CipherValue (the EncryptedKey's and the Body EncryptedData's) go
// into a MIME part, and the CipherValue keeps an xop:Include of it, as the
// BinarySecurityToken does (xop.go). Such a package is learned like an
// encrypted message (decrypt.go), as two templates:
//
//   - the outer one, over the received root, is sealed: its xop:Includes
//     (the CipherValues' and the token's) are cid slots resolved on every
//     match by the one XOP rule set (wss.CIDFromURL, each part named once:
//     attachments), and a CipherValue's octets are its part's content,
//     read whole within wss.MaxBufferedAttachment as the DOM engine's
//     xopCipherValue reads them (AES-GCM authenticates the whole
//     ciphertext before releasing any plaintext);
//   - the inner one, over the plaintext message, is a package template
//     like a signed one (a generic Body whose xop:Includes are found per
//     message, the token's part within wss.MaxTokenPart): it resolves the
//     plaintext's includes and builds the package's facts, the
//     EncryptedData's ciphertext part among them, consumed (the DOM
//     engine's attachmentFacts on its final document).
//
// Whatever the template cannot reproduce exactly (a part missing, named
// twice, the plaintext naming the ciphertext, a part over a bound) falls
// back to the DOM engine, which decides; the self-check on the learned
// package (engine.selfCheck) compares the facts before the template is
// used. A part's Content-Transfer-Encoding is decided before either
// engine runs (mime.Read admits binary, 8bit and 7bit): both read the
// same octets.

// cipherPart reports whether f is the part that held the ciphertext of an
// EncryptedData the decryption replaced: consumed, and no longer named by
// the final document.
func cipherPart(f *wss.AttachmentFact) bool {
	return f.Consumed && !f.XOP && !f.SwA && !f.Decrypted
}

// cipherParts counts, for an inner template, the ciphertext parts the
// plaintext message no longer names: they are accounted for by the run
// (packageFacts).
func (l *learner) cipherParts() int {
	if l.phase != phaseInner {
		return 0
	}
	n := 0
	for i := range l.res.Attachments {
		if cipherPart(&l.res.Attachments[i]) {
			n++
		}
	}
	return n
}

// cipherValueSlot returns the slot holding the ciphertext of CipherData
// cd: its CipherValue's text, or, in a package's root, the href of the
// xop:Include that is its only content (part true), as the DOM engine's
// xopValue admits it.
func (l *learner) cipherValueSlot(cd int) (int, bool) {
	cv := l.d.FirstChild(cd)
	if cv < 0 || !l.is(cv, nsXEnc, "CipherValue") || l.d.NextSibling(cv) >= 0 {
		return -1, false
	}
	if l.pkg && l.d.Elements[cv].Next == cv+2 && l.is(cv+1, nsXOP, "Include") {
		k := l.attrSlot(cv+1, "href")
		if k < 0 || l.slots[k].class != classCID {
			return -1, false
		}
		return k, true
	}
	return l.textSlot(cv), false
}

// cipherOctets are the ciphertext octets of slot k in the learned message.
func (l *learner) cipherOctets(k int, part bool) ([]byte, error) {
	if !part {
		return wss.DecodeBase64(l.value(k))
	}
	cid, err := wss.CIDFromURL(string(l.value(k)))
	if err != nil {
		return nil, err
	}
	a, ok := l.atts.Attachment(cid)
	if !ok {
		return nil, unsupported("ciphertext part")
	}
	ct, f := readCipherPart(a)
	if f != nil {
		return nil, f
	}
	return ct, nil
}

// cipherOctets are the ciphertext octets of slot k: its base64 text, or
// the content of the part its xop:Include names.
func (r *run) cipherOctets(k int, part bool) ([]byte, error) {
	if !part {
		return wss.DecodeBase64(r.val(k))
	}
	a, f := r.attachmentOf(k)
	if f != nil {
		return nil, f
	}
	ct, f := readCipherPart(a)
	if f != nil {
		return nil, f
	}
	return ct, nil
}

// readCipherPart reads a ciphertext part whole, within the bound of the
// DOM engine's readBounded; a larger or unreadable part is the DOM
// engine's to refuse.
func readCipherPart(a wss.Attachment) ([]byte, *fallback) {
	const limit = wss.MaxBufferedAttachment
	if a.Size() > limit {
		return nil, &fallback{"ciphertext part size"}
	}
	rd, err := a.Open()
	if err != nil {
		return nil, &fallback{"ciphertext part unreadable"}
	}
	defer rd.Close()
	n := a.Size()
	if n < 0 {
		n = 0
	}
	buf := make([]byte, 0, n+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		m, err := rd.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if len(buf) > limit {
			return nil, &fallback{"ciphertext part size"}
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, &fallback{"ciphertext part unreadable"}
		}
	}
}

// plainAttachments resolves, in the inner run r of an encrypted package,
// the plaintext message's includes and builds the package's facts; outer
// is the run of the received root, whose includes named the ciphertext
// parts.
func (r *run) plainAttachments(outer *run, st *decStep) *fallback {
	r.atts, r.ciphered = outer.atts, r.ciphered[:0]
	if st.dataPart {
		i := slices.IndexFunc(outer.t.xop, func(inc include) bool { return inc.slot == st.data })
		if i < 0 || i >= len(outer.cids) {
			return &fallback{"ciphertext part"}
		}
		r.ciphered = append(r.ciphered, outer.cids[i])
	}
	if f := r.attachments(); f != nil {
		return f
	}
	for _, cid := range r.swaCIDs {
		if slices.Contains(r.ciphered, cid) {
			return &fallback{"SwA reference to ciphertext"}
		}
	}
	return nil
}
