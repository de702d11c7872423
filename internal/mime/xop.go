package mime

import (
	"fmt"

	"github.com/wssgw/wssgw/internal/xmlscan"
)

// Include is one xop:Include of the root document and the attachment it
// stands for. The reconstructed infoset (XOP 1.0 §4) replaces the children
// of Parent with the base64 encoding of Part's content.
type Include struct {
	Elem   int // index of the xop:Include in Document.Elements
	Parent int // index of its parent element
	Part   *Part
}

// ResolveXOP finds every xop:Include in d (the scanned root part of p) and
// resolves it against p's attachments. It rejects what CheckInclude
// rejects, and
//
//   - an href that is not a cid: URL of a well-formed Content-ID
//     (CIDFromURL: no http:, file: or relative references: security.md C7,
//     CVE-2022-46364);
//   - any xop:Include in an SwA package;
//   - an href naming no attachment of p;
//   - an attachment included twice.
//
// Attachments that no include references are left to CheckReferenced.
func ResolveXOP(d *xmlscan.Document, p *Package) ([]Include, error) {
	var out []Include
	seen := make(map[*Part]bool)
	for i := range d.Elements {
		e := &d.Elements[i]
		if e.Space != xmlscan.NamespaceXOP {
			continue
		}
		href, err := CheckInclude(d, i)
		if err != nil {
			return nil, fmt.Errorf("xop:Include at offset %d: %w", e.Start, err)
		}
		cid, err := CIDFromURL(href)
		if err != nil {
			return nil, fmt.Errorf("xop:Include at offset %d: %w", e.Start, err)
		}
		if !p.IsXOP() {
			return nil, fmt.Errorf("%w: xop:Include in a package of type %q", ErrReference, p.Params["type"])
		}
		part, ok := p.Attachment(cid)
		if !ok {
			return nil, fmt.Errorf("xop:Include at offset %d: %w: no attachment <%s>", e.Start, ErrMissingPart, cid)
		}
		if seen[part] {
			return nil, fmt.Errorf("%w: attachment <%s> included twice", ErrReference, part.cid)
		}
		seen[part] = true
		out = append(out, Include{Elem: i, Parent: e.Parent, Part: part})
	}
	return out, nil
}

// CheckInclude checks element i of d, an element of the XOP namespace, by
// the rules of XOP 1.0 that need no package, and returns its href for the
// caller to resolve. It is the one XOP rule set: ResolveXOP and the DOM
// engine both use it. It rejects
//
//   - any element of the XOP namespace other than Include;
//   - an xop:Include with content, with unqualified attributes other than
//     href or with attributes in the XOP namespace (the XOP 1.0 schema
//     allows only href and attributes of other namespaces);
//   - an xop:Include that is not the whole content of its parent (XOP 1.0
//     §3.1: the optimized element has the xop:Include as its only child;
//     anything beside it, white space included, would be dropped or mixed
//     into the base64 data): ErrPlacement;
//   - an xop:Include without href.
func CheckInclude(d *xmlscan.Document, i int) (string, error) {
	e := &d.Elements[i]
	if e.Local != "Include" {
		return "", fmt.Errorf("%w: element {%s}%s", ErrReference, xmlscan.NamespaceXOP, e.Local)
	}
	if err := checkAlone(d, i); err != nil {
		return "", err
	}
	href, err := includeHref(d, i)
	if err != nil {
		return "", err
	}
	return string(d.AttrValue(href, nil)), nil
}

// includeHref returns the index of the href attribute of xop:Include i,
// the only unqualified attribute it may have.
func includeHref(d *xmlscan.Document, i int) (int, error) {
	e := &d.Elements[i]
	href := -1
	for j := e.Attrs.Start; j < e.Attrs.End; j++ {
		a := &d.Attrs[j]
		switch {
		case a.Space == "" && a.Local == "href":
			href = j
		case a.Space == "" || a.Space == xmlscan.NamespaceXOP:
			return -1, fmt.Errorf("%w: xop:Include has the attribute %s", ErrReference, d.Raw(a.Name))
		}
	}
	if href < 0 {
		return -1, fmt.Errorf("%w: xop:Include has no href", ErrReference)
	}
	return href, nil
}

// checkAlone checks that xop:Include i is empty and the whole content of
// its parent: no sibling element, text, white space, comment, CDATA or
// reference beside it.
func checkAlone(d *xmlscan.Document, i int) error {
	e := &d.Elements[i]
	if e.Parent < 0 {
		return fmt.Errorf("%w: %w: xop:Include is the document element", ErrReference, ErrPlacement)
	}
	if e.Next != i+1 || e.StartEnd != e.EndStart || e.Flags&(xmlscan.FlagComment|xmlscan.FlagCDATA) != 0 {
		return fmt.Errorf("%w: %w: xop:Include has content", ErrReference, ErrPlacement)
	}
	pe := &d.Elements[e.Parent]
	if pe.Next != i+1 || pe.StartEnd != e.Start || pe.EndStart != e.End {
		return fmt.Errorf("%w: %w: xop:Include is not the only content of its parent", ErrReference, ErrPlacement)
	}
	return nil
}

// CheckReferenced rejects an attachment whose Content-ID is not in
// referenced: the engine passes the cids of xop:Includes and of SwA
// signature and encryption references, and an attachment outside them was
// verified by nothing, so it must not reach the backend (security.md C7).
func (p *Package) CheckReferenced(referenced map[string]bool) error {
	for _, a := range p.Attachments {
		if !referenced[a.cid] {
			return fmt.Errorf("%w: attachment <%s> is not referenced", ErrReference, a.cid)
		}
	}
	return nil
}

// CheckSigned is the rule for a sender that signs a package through its
// SOAP Body (buffered response signing, egress requests; issue 15): it
// resolves the xop:Includes of d, the scanned root part of p, by
// ResolveXOP and, for MTOM, requires every attachment to be included from
// inside the Body, whose XOP infoset the signature covers. A part outside
// it would reach the partner unsigned yet looking as trusted as the rest.
// An SwA package passes once ResolveXOP has refused any xop:Include in
// it: each of its parts gets its own cid: Reference.
func CheckSigned(d *xmlscan.Document, p *Package) error {
	incs, err := ResolveXOP(d, p)
	if err != nil {
		return fmt.Errorf("root part: %w", err)
	}
	if !p.IsXOP() {
		return nil
	}
	body := bodyOf(d)
	referenced := make(map[string]bool, len(incs))
	for _, inc := range incs {
		if body >= 0 && body < inc.Elem && inc.Elem < d.Elements[body].Next {
			referenced[inc.Part.ContentID()] = true
		}
	}
	if err := p.CheckReferenced(referenced); err != nil {
		return fmt.Errorf("%w: no xop:Include in the Body signs it", err)
	}
	return nil
}

// bodyOf returns the index of the SOAP Body of d, or -1: the signer
// checks the envelope's shape itself.
func bodyOf(d *xmlscan.Document) int {
	if len(d.Elements) == 0 {
		return -1
	}
	ns := d.Elements[0].Space
	for c := d.FirstChild(0); c >= 0; c = d.NextSibling(c) {
		if e := &d.Elements[c]; e.Space == ns && e.Local == "Body" {
			return c
		}
	}
	return -1
}
