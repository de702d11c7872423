package c14n

import (
	"bytes"

	"github.com/wssgw/wssgw/internal/xmlscan"
)

// subtree canonicalizes element apex and its descendants in document order
// (C14N 1.0 §2.3: the node-set is processed in document order). Character
// data is whatever lies in an element's content span outside its child
// elements, comments and CDATA sections; the gate guarantees the spans are
// well-formed, so the walk only looks at the byte after each '<'.
func (s *state) subtree(apex int) error {
	d := s.d
	data := d.Data
	last := d.Elements[apex].Next // first element after the subtree
	if err := s.startTag(apex, true); err != nil {
		return err
	}
	cur, next, p := apex, apex+1, d.Elements[apex].StartEnd
	for {
		e := &d.Elements[cur]
		q := e.EndStart
		if i := bytes.IndexByte(data[p:q], '<'); i >= 0 {
			q = p + i
		}
		if q > p {
			s.textRun(data[p:q])
		}
		switch {
		case q == e.EndStart:
			s.endTag(cur)
			if cur == apex {
				return s.err
			}
			p, cur = e.End, e.Parent
		case next < last && d.Elements[next].Start == q:
			if s.replace != nil {
				if done, err := s.replaced(next); err != nil {
					return err
				} else if done {
					p, next = d.Elements[next].End, d.Elements[next].Next
					continue
				}
			}
			if err := s.startTag(next, false); err != nil {
				return err
			}
			cur, p = next, d.Elements[next].StartEnd
			next++
		case data[q+2] == '-': // <!--...-->
			end := q + 4 + bytes.Index(data[q+4:], []byte("-->"))
			if s.comments {
				s.comment(data[q+4 : end])
			}
			p = end + 3
		default: // <![CDATA[...]]>: C14N 1.0 §1.1 replaces CDATA by its
			// character content, escaped as text.
			end := q + 9 + bytes.Index(data[q+9:], []byte("]]>"))
			s.text(s.lineEnds(data[q+9 : end]))
			p = end + 3
		}
		if s.err != nil {
			return s.err
		}
	}
}

// textRun emits raw character data: references resolved, line ends
// normalized (XML 1.0 §2.11, §4.6; C14N 1.0 §1.1), then escaped.
func (s *state) textRun(raw []byte) {
	if bytes.IndexByte(raw, '&') < 0 && (!s.d.HasCR || bytes.IndexByte(raw, '\r') < 0) {
		s.text(raw)
		return
	}
	v, err := xmlscan.NormalizeText(raw, s.scratch)
	if err != nil { // impossible after the gate; never emit raw bytes
		s.err = err
		return
	}
	s.scratch = v[:0]
	s.text(v)
}

// lineEnds normalizes line ends of comment and CDATA content.
func (s *state) lineEnds(raw []byte) []byte {
	if !s.d.HasCR || bytes.IndexByte(raw, '\r') < 0 {
		return raw
	}
	v := xmlscan.NormalizeLineEnds(raw, s.scratch)
	s.scratch = v[:0]
	return v
}

// comment emits a comment node of the WithComments variants: "<!--",
// its string value, "-->", unescaped (C14N 1.0 §2.3, comment nodes).
func (s *state) comment(raw []byte) {
	s.str("<!--")
	s.raw(s.lineEnds(raw))
	s.str("-->")
	s.maybeFlush()
}

// qname returns the raw qualified name of element i.
func (s *state) qname(i int) []byte {
	e := &s.d.Elements[i]
	return s.d.Data[e.Start+1 : e.Start+1+e.QNameLen()]
}

// startTag emits "<" QName, the namespace nodes, the attributes, ">"
// (C14N 1.0 §2.3, element nodes). An empty-element tag is rendered as a
// start-end tag pair like any other element.
func (s *state) startTag(i int, apex bool) error {
	d := s.d
	s.marks = append(s.marks, len(s.rendered))
	if !apex && !s.noVerbatim {
		if end := s.verbatim(i); end > 0 {
			e := &d.Elements[i]
			s.buf = append(s.buf, d.Data[e.Start:end]...)
			s.buf = append(s.buf, '>')
			s.maybeFlush()
			return nil
		}
	}
	for _, ns := range d.NSDeclsOf(i) {
		if relative(ns.URI) {
			return ErrRelativeNamespace
		}
	}
	s.cand = s.cand[:0]
	if s.m == modeExc {
		s.excNamespaces(i, apex)
	} else {
		s.inclusiveNamespaces(i, apex)
	}
	if err := s.collectAttrs(i, apex); err != nil {
		return err
	}
	s.buf = append(s.buf, '<')
	s.buf = append(s.buf, s.qname(i)...)
	// Namespace nodes in lexicographic order by local name, the default
	// namespace (local name "") first (C14N 1.0 §2.2, §2.3).
	sortBindings(s.cand)
	for _, b := range s.cand {
		if relative(b.uri) {
			return ErrRelativeNamespace
		}
		if b.prefix == "" {
			s.str(` xmlns="`)
		} else {
			s.str(" xmlns:")
			s.str(b.prefix)
			s.str(`="`)
		}
		s.buf = appendAttr(s.buf, b.uri)
		s.buf = append(s.buf, '"')
		s.rendered = append(s.rendered, b)
	}
	for _, j := range s.attrs {
		a := &d.Attrs[j]
		s.buf = append(s.buf, ' ')
		s.buf = append(s.buf, d.Raw(a.Name)...)
		s.str(`="`)
		v := d.Data[a.Value.Start:a.Value.End]
		if a.Flags&xmlscan.AttrNorm != 0 {
			// XML 1.0 §3.3.3 attribute-value normalization.
			v = d.AttrValue(j, s.scratch)
			s.scratch = v[:0]
		}
		s.buf = appendAttr(s.buf, v)
		s.buf = append(s.buf, '"')
	}
	s.buf = append(s.buf, '>')
	s.maybeFlush()
	return nil
}

// verbatim returns where element i's start tag ends in the input, before
// its '>' or "/>", when the bytes from its '<' to there are exactly the
// canonical start tag's before its '>', and 0 otherwise: below the apex,
// an element that declares no namespace renders none when the namespaces
// of its name and prefixed attributes are already in effect in the output
// (exc-c14n §3; C14N 1.0 §2.3 renders only an element's own declarations
// below the apex), and its attributes come out as written when they are
// in canonical order, each after one space, quoted with '"', '=' between
// name and value, no value changed by normalization (xmlscan.FlagAttrNorm:
// no reference, TAB, LF or CR) and so none escaped ('<' cannot occur, '"'
// not inside '"'). Markup-dense payloads written by most stacks meet all
// of it, and copying the tag saves most of the per-tag work of
// canonicalizing them (issue 14: the DOM engine canonicalizes every
// signed part of a fresh shape). Anything else takes the general path.
func (s *state) verbatim(i int) int {
	d := s.d
	e := &d.Elements[i]
	if e.NS.Len() != 0 || e.Flags&xmlscan.FlagAttrNorm != 0 || e.Prefix == "xml" || s.effective(e.Prefix) != e.Space {
		return 0
	}
	data := d.Data
	p := e.Start + 1 + e.QNameLen()
	r := e.Attrs
	for j := r.Start; j < r.End; j++ {
		a := &d.Attrs[j]
		if a.Name.Start != p+1 || data[p] != ' ' || a.Quote != '"' || a.Value.Start != a.Name.End+2 ||
			a.Prefix != "" && (a.Prefix == "xml" || s.effective(a.Prefix) != a.Space) ||
			j > r.Start && !attrLess(&d.Attrs[j-1], a) {
			return 0
		}
		p = a.Value.End + 1
	}
	switch {
	case e.Flags&xmlscan.FlagEmpty != 0 && p == e.StartEnd-2: // "/>"
		return p
	case e.Flags&xmlscan.FlagEmpty == 0 && p == e.StartEnd-1: // ">"
		return p
	}
	return 0
}

// endTag emits "</" QName ">" and leaves the element's namespace scope.
func (s *state) endTag(i int) {
	s.str("</")
	s.buf = append(s.buf, s.qname(i)...)
	s.buf = append(s.buf, '>')
	top := len(s.marks) - 1
	s.rendered = s.rendered[:s.marks[top]]
	s.marks = s.marks[:top]
	s.maybeFlush()
}

// collectAttrs fills s.attrs with the attribute nodes to render on element
// i, in lexicographic order with the namespace URI as primary key and the
// local name as secondary key, unqualified attributes (URI "") first
// (C14N 1.0 §2.2, §2.3).
func (s *state) collectAttrs(i int, apex bool) error {
	d := s.d
	r := d.Elements[i].Attrs
	s.attrs = s.attrs[:0]
	for j := r.Start; j < r.End; j++ {
		s.attrs = append(s.attrs, j)
	}
	if apex && s.m != modeExc {
		if err := s.inheritXMLAttrs(i); err != nil {
			return err
		}
	}
	// Insertion sort: attribute counts are bounded by the gate.
	for x := 1; x < len(s.attrs); x++ {
		for y := x; y > 0 && attrLess(&d.Attrs[s.attrs[y]], &d.Attrs[s.attrs[y-1]]); y-- {
			s.attrs[y], s.attrs[y-1] = s.attrs[y-1], s.attrs[y]
		}
	}
	return nil
}

func attrLess(a, b *xmlscan.Attr) bool {
	if a.Space != b.Space {
		return a.Space < b.Space
	}
	return a.Local < b.Local
}

// inheritXMLAttrs adds to the apex of an inclusive canonicalization the
// xml:* attributes of its ancestors that it does not carry itself, the
// nearest ancestor winning. C14N 1.0 §2.4 inherits every xml:* attribute;
// C14N 1.1 §2.4 inherits only the simple inheritable attributes xml:lang
// and xml:space, never xml:id, and fixes up xml:base, which is not
// implemented here: an ancestor's xml:base gives ErrUnsupported.
// Exclusive c14n inherits none (exc-c14n §3, "xml:* attributes are not
// imported").
func (s *state) inheritXMLAttrs(apex int) error {
	d := s.d
	for j := d.Elements[apex].Parent; j >= 0; j = d.Elements[j].Parent {
		r := d.Elements[j].Attrs
		for k := r.Start; k < r.End; k++ {
			a := &d.Attrs[k]
			if a.Space != xmlscan.NamespaceXML {
				continue
			}
			if s.m == modeC14N11 {
				switch a.Local {
				case "base":
					return ErrUnsupported
				case "lang", "space":
				default:
					continue
				}
			}
			if !s.hasXMLAttr(a.Local) {
				s.attrs = append(s.attrs, k)
			}
		}
	}
	return nil
}

func (s *state) hasXMLAttr(local string) bool {
	for _, k := range s.attrs {
		if a := &s.d.Attrs[k]; a.Space == xmlscan.NamespaceXML && a.Local == local {
			return true
		}
	}
	return false
}
