package dom

import (
	"errors"
	"fmt"
	"hash"
	"io"

	"github.com/wssgw/wssgw/internal/c14n"
	"github.com/wssgw/wssgw/internal/mime"
	"github.com/wssgw/wssgw/internal/wss"
)

// indexXOP checks every element of the XOP namespace by mime.CheckInclude
// (the one XOP rule set: W3C XOP 1.0 §3.1, §4) and maps each xop:Include
// to its part: href is a cid: URL (cidFromURL) naming an attachment of the
// package, and no part is included twice or both included and used as
// ciphertext (one part, one meaning: two xop:Includes of one part would
// let a signature over one vouch for the other).
func (m *message) indexXOP() error {
	m.att.xop = map[int]string{}
	seen := map[string]bool{}
	for i := range m.doc.Elements {
		if m.doc.Elements[i].Space != nsXOP {
			continue
		}
		href, err := mime.CheckInclude(m.doc, i)
		if err != nil {
			return xopFault(err)
		}
		_, f, err := m.attachment(href)
		if err != nil {
			return err
		}
		if seen[f.CID] {
			return wss.Failf(wss.ReasonReference, "attachment <%s> included twice", f.CID)
		}
		if f.Decrypted || (f.Consumed && !m.xopValue(m.doc.Elements[i].Parent)) {
			// A consumed part stays named by the CipherValue that held it
			// (an EncryptedKey stays in the header); nothing else may
			// name ciphertext.
			return wss.Failf(wss.ReasonReference, "xop:Include of an encrypted attachment")
		}
		seen[f.CID] = true
		m.att.xop[i] = f.CID
	}
	return nil
}

// xopFault maps a mime.CheckInclude error to its fault: an xop:Include out
// of place breaks the structure, anything else is a bad reference.
func xopFault(err error) error {
	if errors.Is(err, mime.ErrPlacement) {
		return wss.Wrap(wss.ReasonStructure, err, "xop:Include")
	}
	return wss.Wrap(wss.ReasonReference, err, "xop:Include")
}

// hasXOP reports whether the subtree of element i holds an xop:Include.
func (m *message) hasXOP(i int) bool {
	if m.att == nil {
		return false
	}
	for inc := range m.att.xop {
		if inc > i && inc < m.doc.Elements[i].Next {
			return true
		}
	}
	return false
}

// xopDigest digests one Reference target holding xop:Includes in the two
// lexical forms a signer may have put in place of each xop:Include: the
// canonical base64 (XOP 1.0 §3.2; Santuario with ignoreLineBreaks) in a,
// and the MIME form of Apache Santuario's default XMLUtils.encodeToString
// (76-character lines separated by CR LF, which C14N renders "&#xD;\n";
// what WSS4J inlines with expandXOPInclude) in b. Both are the same
// octets of the same part, so accepting either digest proves the same
// content. Everything outside the xop:Includes goes to both.
type xopDigest struct{ a, b hash.Hash }

func (x *xopDigest) Write(p []byte) (int, error) {
	x.a.Write(p)
	return x.b.Write(p)
}

// xopReplacer returns the c14n Replacer that writes each xop:Include's
// part, base64-encoded in both forms, into x (read once, never
// materialized).
func (m *message) xopReplacer(x *xopDigest) c14n.Replacer {
	return func(elem int) (func(io.Writer) error, bool) {
		cid, ok := m.att.xop[elem]
		if !ok {
			return nil, false
		}
		return func(io.Writer) error {
			a, ok := m.att.atts.Attachment(cid)
			if !ok {
				return wss.Failf(wss.ReasonReference, "attachment <%s> vanished", cid)
			}
			return streamBase64(a, x.a, x.b)
		}, true
	}
}

// streamBase64 writes the base64 of a's content to both writers, in the
// two forms of mime.EncodeXOP.
func streamBase64(a wss.Attachment, line, lines io.Writer) error {
	r, err := a.Open()
	if err != nil {
		return fmt.Errorf("dom: open attachment: %w", err)
	}
	defer r.Close()
	return mime.EncodeXOP(r, line, lines)
}
