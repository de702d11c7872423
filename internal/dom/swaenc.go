package dom

import (
	"bufio"
	"bytes"
	"fmt"
	"net/textproto"
	"strings"

	"github.com/wssgw/wssgw/internal/wss"
)

// xopCipherValue returns the octets of a CipherValue whose content is
// xop:Include inc (WSS4J storeBytesInAttachment): the part's content,
// bounded, since decryption needs all of it. The part is consumed: it is
// ciphertext the backend must not get, and nothing else may name it.
func (m *message) xopCipherValue(inc int) ([]byte, error) {
	cid := m.att.xop[inc]
	f := &m.res.Attachments[m.att.fact[cid]]
	if m.att.ciphered[cid] {
		return nil, wss.Failf(wss.ReasonReference, "attachment <%s> used as ciphertext twice", cid)
	}
	a, ok := m.att.atts.Attachment(cid)
	if !ok {
		return nil, wss.Failf(wss.ReasonReference, "reference to an unknown attachment")
	}
	cv, err := m.readBounded(a)
	if err != nil {
		return nil, err
	}
	m.att.ciphered[cid] = true
	f.Consumed = true
	return cv, nil
}

// decryptAttachment decrypts the attachment an EncryptedData of Type
// Attachment-Content-Only or Attachment-Complete names (SwA §5.5): its
// CipherData holds a CipherReference to a cid: URL with exactly the
// Attachment-Ciphertext-Transform, the part's content is IV ‖ ciphertext
// (‖ tag), and the plaintext replaces the part (atts.Replace). The
// EncryptedData is then removed from the header: it has been accounted
// for, and no element is left that looks like undecrypted ciphertext.
func (m *message) decryptAttachment(ed, cd int, alg string, key []byte, complete bool) error {
	uri, err := m.cipherReference(cd)
	if err != nil {
		return err
	}
	a, f, err := m.attachment(uri)
	if err != nil {
		return err
	}
	if m.att.ciphered[f.CID] {
		return wss.Failf(wss.ReasonReference, "attachment <%s> named as ciphertext twice", f.CID)
	}
	for _, cid := range m.att.xop {
		if cid == f.CID {
			return wss.Failf(wss.ReasonReference, "attachment <%s> is both included and encrypted", cid)
		}
	}
	cv, err := m.readBounded(a)
	if err != nil {
		return err
	}
	pt, err := m.decryptCipher(alg, key, cv, "attachment EncryptedData")
	if err != nil {
		return err
	}
	header, content, err := m.plainHeader(ed, a, pt, complete)
	if err != nil {
		return err
	}
	if err := m.att.atts.Replace(f.CID, header, bytes.NewReader(content)); err != nil {
		return wss.Wrap(wss.ReasonDecrypt, err, "replacing attachment <%s>", f.CID)
	}
	m.att.ciphered[f.CID] = true
	f.Decrypted = true
	return m.removeElement(ed)
}

// cipherReference reads CipherData/CipherReference: a cid: URI and exactly
// the Attachment-Ciphertext-Transform (SwA §5.5.1), nothing else.
func (m *message) cipherReference(cd int) (string, error) {
	c, err := m.only(cd, "CipherData")
	if err != nil {
		return "", err
	}
	if !m.is(c, nsXEnc, "CipherReference") {
		return "", wss.Failf(wss.ReasonStructure, "attachment CipherData without CipherReference")
	}
	uri, _ := m.attr(c, "", "URI")
	ts, err := m.only(c, "CipherReference")
	if err != nil || !m.is(ts, nsXEnc, "Transforms") {
		return "", wss.Failf(wss.ReasonStructure, "CipherReference without Transforms")
	}
	t, err := m.only(ts, "Transforms")
	if err != nil || !m.is(t, nsDS, "Transform") || len(m.children(t)) > 0 {
		return "", wss.Failf(wss.ReasonAlgorithm, "CipherReference must have exactly one Transform")
	}
	if alg, _ := m.attr(t, "", "Algorithm"); alg != trSwACiphertext {
		return "", wss.Failf(wss.ReasonAlgorithm, "CipherReference Transform %q", alg)
	}
	m.use(wss.UseC14N, trSwACiphertext)
	return uri, nil
}

// plainHeader returns the MIME header and content of a decrypted
// attachment. Content-Only keeps the part's header with the EncryptedData
// MimeType as Content-Type (SwA §5.5.2); Complete plaintext starts with
// the encrypted headers, which replace the outer ones of the same name
// (WSS4J readAndReplaceEncryptedAttachmentHeaders).
func (m *message) plainHeader(ed int, a wss.Attachment, pt []byte, complete bool) (textproto.MIMEHeader, []byte, error) {
	h := textproto.MIMEHeader{}
	for k, v := range a.Header() {
		h[textproto.CanonicalMIMEHeaderKey(k)] = append([]string(nil), v...)
	}
	if !complete {
		if mt, ok := m.attr(ed, "", "MimeType"); ok && mt != "" {
			h.Set("Content-Type", mt)
		}
		return h, pt, nil
	}
	inner, n, err := readPlainHeader(pt)
	if err != nil {
		return nil, nil, wss.Wrap(wss.ReasonDecrypt, err, "attachment headers")
	}
	for k, v := range inner {
		h[k] = v
	}
	return h, pt[n:], nil
}

// Bounds of the MIME headers inside an Attachment-Complete plaintext, as
// WSS4J enforces them (RFC 5322 §2.1.1: 998 characters a line).
const (
	maxPlainHeaderLines = 100
	maxPlainHeaderLine  = 998
)

// readPlainHeader parses the header block at the start of pt, up to and
// including the empty line, and returns it with its length.
func readPlainHeader(pt []byte) (textproto.MIMEHeader, int, error) {
	h := textproto.MIMEHeader{}
	r := bufio.NewReader(bytes.NewReader(pt))
	n := 0
	for lines := 0; ; lines++ {
		line, err := r.ReadSlice('\n')
		if err != nil || lines > maxPlainHeaderLines || len(line) > maxPlainHeaderLine+2 || !bytes.HasSuffix(line, []byte("\r\n")) {
			return nil, 0, fmt.Errorf("dom: malformed encrypted attachment header")
		}
		n += len(line)
		s := string(line[:len(line)-2])
		if s == "" {
			return h, n, nil
		}
		name, value, ok := strings.Cut(s, ":")
		if !ok || name == "" || strings.ContainsAny(name, " \t") {
			return nil, 0, fmt.Errorf("dom: malformed encrypted attachment header line")
		}
		h.Add(name, strings.TrimSpace(value))
	}
}

// removeElement removes element ed (accounted for) and reloads the
// message. A signature that covered an element in it no longer covers
// anything: its offset would otherwise name whatever follows (node
// identity, DESIGN.md §5.3).
func (m *message) removeElement(ed int) error {
	a, b := m.doc.Elements[ed].Start, m.doc.Elements[ed].End
	for i := range m.res.Signatures {
		s := &m.res.Signatures[i]
		kept := s.Covered[:0]
		for _, c := range s.Covered {
			if c < a || c >= b {
				kept = append(kept, c)
			}
		}
		s.Covered = kept
	}
	return m.splice(ed, nil)
}
