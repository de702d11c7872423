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
// resolves it against p's attachments. It rejects
//
//   - any element of the XOP namespace other than Include, and any
//     xop:Include in an SwA package;
//   - an href that is not a cid: URL naming an attachment (no http:, file:
//     or relative references: security.md C7, CVE-2022-46364);
//   - an attachment included twice;
//   - an xop:Include with content, with unqualified attributes other than
//     href or attributes in the XOP namespace (the XOP 1.0 schema allows
//     only href and attributes of other namespaces);
//   - an xop:Include that is not the only child of its parent, with text
//     other than white space, comments or CDATA beside it: XOP 1.0 §3
//     replaces the whole content of an optimized element, so anything
//     beside the include would be dropped or mixed into the base64 data.
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
		if e.Local != "Include" {
			return nil, fmt.Errorf("%w: element {%s}%s", ErrReference, xmlscan.NamespaceXOP, e.Local)
		}
		if !p.IsXOP() {
			return nil, fmt.Errorf("%w: xop:Include in a package of type %q", ErrReference, p.Params["type"])
		}
		part, err := resolveInclude(d, i, p)
		if err != nil {
			return nil, fmt.Errorf("xop:Include at offset %d: %w", e.Start, err)
		}
		if seen[part] {
			return nil, fmt.Errorf("%w: attachment <%s> included twice", ErrReference, part.cid)
		}
		seen[part] = true
		out = append(out, Include{Elem: i, Parent: e.Parent, Part: part})
	}
	return out, nil
}

// resolveInclude checks one xop:Include and its place in the tree.
func resolveInclude(d *xmlscan.Document, i int, p *Package) (*Part, error) {
	e := &d.Elements[i]
	if e.StartEnd != e.EndStart {
		return nil, fmt.Errorf("%w: xop:Include has content", ErrReference)
	}
	href := -1
	for j := e.Attrs.Start; j < e.Attrs.End; j++ {
		a := &d.Attrs[j]
		switch {
		case a.Space == "" && a.Local == "href":
			href = j
		case a.Space == "" || a.Space == xmlscan.NamespaceXOP:
			return nil, fmt.Errorf("%w: xop:Include has the attribute %s", ErrReference, d.Raw(a.Name))
		}
	}
	if href < 0 {
		return nil, fmt.Errorf("%w: xop:Include has no href", ErrReference)
	}
	if err := checkOnlyChild(d, i); err != nil {
		return nil, err
	}
	cid, err := CIDFromURL(string(d.AttrValue(href, nil)))
	if err != nil {
		return nil, err
	}
	part, ok := p.Attachment(cid)
	if !ok {
		return nil, fmt.Errorf("%w: no attachment <%s>", ErrMissingPart, cid)
	}
	return part, nil
}

// checkOnlyChild checks that element i is the only content of its parent
// apart from white space.
func checkOnlyChild(d *xmlscan.Document, i int) error {
	parent := d.Elements[i].Parent
	if parent < 0 {
		return fmt.Errorf("%w: xop:Include is the document element", ErrReference)
	}
	pe := &d.Elements[parent]
	if d.FirstChild(parent) != i || d.NextSibling(i) >= 0 {
		return fmt.Errorf("%w: xop:Include has sibling elements", ErrReference)
	}
	if pe.Flags&(xmlscan.FlagComment|xmlscan.FlagCDATA|xmlscan.FlagTextRef) != 0 {
		return fmt.Errorf("%w: a comment, CDATA or reference beside xop:Include", ErrReference)
	}
	for _, c := range d.Text(parent, nil) {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return fmt.Errorf("%w: text beside xop:Include", ErrReference)
		}
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
