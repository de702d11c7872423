package signer

import (
	"encoding/base64"
	"fmt"
	"io"

	"github.com/wssgw/wssgw/internal/c14n"
	"github.com/wssgw/wssgw/internal/mime"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// XOPParts opens the content of the attachment whose Content-ID is cid
// (as mime.CIDFromURL returns it), for Secure to digest an MTOM envelope
// over its XOP infoset; ok is false when the package has no such part.
type XOPParts func(cid string) (r io.ReadCloser, ok bool, err error)

// xopReplacer maps every xop:Include of the assembled message d to the
// part it names, checked by mime.CheckInclude (the one XOP rule set, the
// DOM engine's too), and returns the c14n Replacer that writes each part's
// base64 in place of its xop:Include (XOP 1.0 §4, infoset
// reconstruction). The part is read from open once per digest, never
// materialized. Every xop:Include must lie inside one of the signed
// elements: a part it names would otherwise travel unsigned.
//
// The base64 is in the MIME form, 76-character lines separated by CR LF
// (which C14N writes "&#xD;\n"): that is what WSS4J inlines before it
// verifies an MTOM message (expandXOPInclude, Santuario's
// XMLUtils.encodeToString), so a stock stack computes the same digest. The
// project's verifier accepts this form and the unbroken one.
func xopReplacer(d *xmlscan.Document, signed []int, open XOPParts) (c14n.Replacer, error) {
	cids := map[int]string{}
	seen := map[string]bool{}
	for i := range d.Elements {
		if d.Elements[i].Space != xmlscan.NamespaceXOP {
			continue
		}
		href, err := mime.CheckInclude(d, i)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrEnvelope, err)
		}
		cid, err := mime.CIDFromURL(href)
		if err != nil {
			return nil, fmt.Errorf("%w: xop:Include: %w", ErrEnvelope, err)
		}
		if seen[cid] {
			// One part, one place: a signature over one include would
			// vouch for the other.
			return nil, fmt.Errorf("%w: attachment <%s> included twice", ErrEnvelope, cid)
		}
		if !inside(d, i, signed) {
			return nil, fmt.Errorf("%w: xop:Include of <%s> outside the signed elements", ErrEnvelope, cid)
		}
		seen[cid] = true
		cids[i] = cid
	}
	return func(elem int) (func(io.Writer) error, bool) {
		cid, ok := cids[elem]
		if !ok {
			return nil, false
		}
		return func(w io.Writer) error { return writeBase64Lines(w, open, cid) }, true
	}, nil
}

// inside reports whether element i is a descendant of one of roots.
func inside(d *xmlscan.Document, i int, roots []int) bool {
	for _, r := range roots {
		if r < i && i < d.Elements[r].Next {
			return true
		}
	}
	return false
}

// writeBase64Lines writes the base64 of part cid to w in 76-character
// lines (RFC 2045 §6.8), canonical CR LF between them.
func writeBase64Lines(w io.Writer, open XOPParts, cid string) error {
	r, ok, err := open(cid)
	if err != nil {
		return fmt.Errorf("signer: attachment <%s>: %w", cid, err)
	}
	if !ok {
		return fmt.Errorf("%w: xop:Include of a missing attachment <%s>", ErrEnvelope, cid)
	}
	defer r.Close()
	enc := base64.NewEncoder(base64.StdEncoding, &mimeLines{w: w})
	if _, err := io.Copy(enc, r); err != nil {
		return fmt.Errorf("signer: attachment <%s>: %w", cid, err)
	}
	return enc.Close()
}

// mimeLines breaks base64 text into 76-character lines separated by the
// canonical form of CR LF, none after the last line (Java's
// Base64.getMimeEncoder).
type mimeLines struct {
	w   io.Writer
	col int
}

const mimeLineLen = 76

var canonicalCRLF = []byte("&#xD;\n")

func (l *mimeLines) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if l.col == mimeLineLen {
			if _, err := l.w.Write(canonicalCRLF); err != nil {
				return 0, err
			}
			l.col = 0
		}
		k := min(mimeLineLen-l.col, len(p))
		if _, err := l.w.Write(p[:k]); err != nil {
			return 0, err
		}
		l.col += k
		p = p[k:]
	}
	return n, nil
}
