package signer

import (
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
// The base64 is one unbroken line (XOP 1.0 §3.2's canonical lexical
// form): WSS4J 4 inlines it so before it verifies an MTOM message
// (expandXopInclude with Santuario's ignoreLineBreaks, checked against
// the interop peer; the 76-column MIME form fails there). The project's
// verifier accepts this form and the MIME one.
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
		return func(w io.Writer) error { return writeBase64(w, open, cid) }, true
	}, nil
}

// inside reports whether element i is a descendant of one of roots (-1,
// a cid: Reference's, is no element).
func inside(d *xmlscan.Document, i int, roots []int) bool {
	for _, r := range roots {
		if r >= 0 && r < i && i < d.Elements[r].Next {
			return true
		}
	}
	return false
}

// writeBase64 writes the base64 of part cid to w, one unbroken line.
func writeBase64(w io.Writer, open XOPParts, cid string) error {
	r, ok, err := open(cid)
	if err != nil {
		return fmt.Errorf("signer: attachment <%s>: %w", cid, err)
	}
	if !ok {
		return fmt.Errorf("%w: xop:Include of a missing attachment <%s>", ErrEnvelope, cid)
	}
	defer r.Close()
	if err := mime.EncodeXOP(r, w, nil); err != nil {
		return fmt.Errorf("signer: attachment <%s>: %w", cid, err)
	}
	return nil
}
