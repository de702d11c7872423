package xmlscan

// Span is a half-open byte range [Start, End) of Document.Data.
type Span struct {
	Start, End int
}

// Len returns the length of the span.
func (s Span) Len() int { return s.End - s.Start }

// Range is a half-open index range [Start, End) into one of the Document
// slices (Attrs, NSDecls).
type Range struct {
	Start, End int
}

// Len returns the number of items in the range.
func (r Range) Len() int { return r.End - r.Start }

// Flags describe an element. The subtree flags are set on the element in
// which the construct occurs and on all its ancestors.
type Flags uint16

const (
	// FlagEmpty: the element was written as an empty-element tag <a/>.
	FlagEmpty Flags = 1 << iota
	// FlagComment: the element's subtree contains a comment.
	FlagComment
	// FlagCDATA: the element's subtree contains a CDATA section.
	FlagCDATA
	// FlagRef: the element's subtree contains a character or entity
	// reference, in text or in an attribute value.
	FlagRef
	// FlagTextRef: the element's own character data (not its
	// descendants') contains a reference.
	FlagTextRef
	// FlagAttrRef: one of the element's own attribute values (namespace
	// declarations included) contains a reference.
	FlagAttrRef
	// FlagAttrNorm: one of the element's own attribute values (namespace
	// declarations included) changes under attribute-value normalization:
	// it has a reference, TAB, LF or CR.
	FlagAttrNorm
	// FlagProtected: the element is one of Config.NoCommentsIn; its subtree
	// has no comments or CDATA.
	FlagProtected

	subtreeFlags = FlagComment | FlagCDATA | FlagRef
)

// AttrFlags describe one attribute value.
type AttrFlags uint8

const (
	// AttrRef: the raw value contains a character or entity reference.
	AttrRef AttrFlags = 1 << iota
	// AttrNorm: the normalized value differs from the raw bytes (a
	// reference, TAB, LF or CR occurs); NormalizeAttrValue must be used.
	AttrNorm
)

// Element is one element, in document order. Offsets index Document.Data.
//
// For <a x="1">t</a>:   Start=0 StartEnd=10 EndStart=11 End=15.
// For an empty-element tag <a/> (FlagEmpty): EndStart == End == StartEnd, so
// Data[StartEnd:EndStart] (the content) is empty and Data[Start:End] is
// still the whole element.
type Element struct {
	Start    int // offset of '<'
	StartEnd int // offset just past the start tag's '>'
	EndStart int // offset of "</" of the end tag
	End      int // offset just past the end tag's '>'

	Depth  int // 1 for the root
	Parent int // index of the parent in Document.Elements, -1 for the root
	// Next is the index of the first element after this element's subtree:
	// its descendants are Elements[i+1 : Next].
	Next int

	Prefix string // "" when unprefixed
	Local  string
	Space  string // resolved namespace URI, "" for no namespace

	Attrs Range // into Document.Attrs (namespace declarations excluded)
	NS    Range // into Document.NSDecls: the declarations this element adds
	Flags Flags
}

// QNameLen is the byte length of the element's qualified name.
func (e *Element) QNameLen() int {
	if e.Prefix == "" {
		return len(e.Local)
	}
	return len(e.Prefix) + 1 + len(e.Local)
}

// Attr is one attribute (not a namespace declaration).
type Attr struct {
	Name   Span   // the qualified name
	Prefix string // "" when unprefixed
	Local  string
	Space  string // resolved namespace URI; "" for unprefixed attributes
	// Value is the raw value between the quotes; use Document.AttrValue or
	// NormalizeAttrValue for the normalized value.
	Value Span
	Quote byte // '"' or '\''
	Flags AttrFlags
}

// NSDecl is one namespace declaration attribute.
type NSDecl struct {
	Name   Span   // "xmlns" or "xmlns:p"
	Prefix string // "" for the default namespace
	URI    string // normalized value; "" only for xmlns="" (undeclaring the default)
	Value  Span   // raw value between the quotes
	Quote  byte
}

// NodeKind is the kind of a Node.
type NodeKind uint8

const (
	NodeComment NodeKind = iota + 1 // <!--...-->
	NodeCDATA                       // <![CDATA[...]]>
)

// Node is a comment or CDATA section. Span covers the whole construct from
// '<' to '>'. Parent is the enclosing element (comments and CDATA outside
// the root are rejected).
type Node struct {
	Kind   NodeKind
	Span   Span
	Parent int
}

// Document is the result of a scan. The zero value is ready to use; pass the
// same Document to Scan again (or keep them in a sync.Pool) to reuse its
// slices, so that steady-state scans do not allocate. A Document must not be
// used by two goroutines at once. After a failed scan its contents are
// unspecified.
//
// Text nodes are not listed: character data is everything in an element's
// content span [StartEnd, EndStart) that is not inside a child element
// ([Start, End) of the children) or a Node in Misc. Document.Text decodes it.
type Document struct {
	// Data is the scanned input. It is not copied: the caller must not
	// modify it while the Document is in use.
	Data []byte
	// BOM reports a leading UTF-8 byte order mark (Data[0:3]).
	BOM bool
	// Decl is the span of the XML declaration, empty if there is none.
	Decl Span
	// HasCR reports whether Data contains a carriage return anywhere, i.e.
	// whether line-end normalization (XML 1.0 §2.11) can change anything.
	HasCR bool

	Elements []Element // in document order; Elements[0] is the root
	Attrs    []Attr
	NSDecls  []NSDecl
	Misc     []Node // comments and CDATA sections in document order

	// Counts of elements in the XML Signature namespace.
	References, Transforms, Signatures int
	// Counts of elements in the XML Encryption namespace.
	EncryptedKeys, EncryptedData int

	scratch scratch
}

// retainMax bounds the capacity Reset keeps, so a pooled Document does not
// pin the memory of one exceptionally large message.
const retainMax = 1 << 16

// Reset empties d for reuse, keeping its buffers unless they grew very large.
func (d *Document) Reset() {
	d.Data = nil
	d.BOM, d.HasCR = false, false
	d.Decl = Span{}
	d.References, d.Transforms, d.Signatures = 0, 0, 0
	d.EncryptedKeys, d.EncryptedData = 0, 0
	d.Elements = truncate(d.Elements)
	d.Attrs = truncate(d.Attrs)
	d.NSDecls = truncate(d.NSDecls)
	d.Misc = truncate(d.Misc)
	d.scratch.reset()
}

func truncate[T any](s []T) []T {
	if cap(s) > retainMax {
		return nil
	}
	return s[:0]
}

// Root returns the root element.
func (d *Document) Root() *Element { return &d.Elements[0] }

// Raw returns the bytes of s.
func (d *Document) Raw(s Span) []byte { return d.Data[s.Start:s.End] }

// ElementBytes returns the exact bytes of element i, start tag to end tag.
func (d *Document) ElementBytes(i int) []byte {
	e := &d.Elements[i]
	return d.Data[e.Start:e.End]
}

// AttrsOf returns the attributes of element i (namespace declarations
// excluded), in document order.
func (d *Document) AttrsOf(i int) []Attr {
	r := d.Elements[i].Attrs
	return d.Attrs[r.Start:r.End]
}

// NSDeclsOf returns the namespace declarations on element i.
func (d *Document) NSDeclsOf(i int) []NSDecl {
	r := d.Elements[i].NS
	return d.NSDecls[r.Start:r.End]
}

// FindAttr returns the index in d.Attrs of element i's attribute with the
// expanded name {space}local, or -1. Matching is by namespace URI, never by
// prefix (security.md §0.4).
func (d *Document) FindAttr(i int, space, local string) int {
	r := d.Elements[i].Attrs
	for j := r.Start; j < r.End; j++ {
		if a := &d.Attrs[j]; a.Local == local && a.Space == space {
			return j
		}
	}
	return -1
}

// AttrValue returns the normalized value of d.Attrs[j] (XML 1.0 §3.3.3 for
// CDATA-typed attributes). It returns the raw bytes without copying when
// nothing needs normalizing, otherwise the value is written to buf[:0].
func (d *Document) AttrValue(j int, buf []byte) []byte {
	a := &d.Attrs[j]
	raw := d.Data[a.Value.Start:a.Value.End]
	if a.Flags&AttrNorm == 0 {
		return raw
	}
	v, _ := NormalizeAttrValue(raw, buf) // references were validated by Scan
	return v
}

// FirstChild returns the index of element i's first child element, or -1.
func (d *Document) FirstChild(i int) int {
	if i+1 < d.Elements[i].Next {
		return i + 1
	}
	return -1
}

// NextSibling returns the index of element i's next sibling element, or -1.
func (d *Document) NextSibling(i int) int {
	n := d.Elements[i].Next
	if n < len(d.Elements) && d.Elements[n].Parent == d.Elements[i].Parent {
		return n
	}
	return -1
}

// LookupPrefix resolves prefix in the scope of element i ("" for the
// default namespace); ok reports whether a declaration is in scope (for the
// default namespace it may be xmlns="", giving uri ""). The xml prefix is
// always bound.
func (d *Document) LookupPrefix(i int, prefix string) (uri string, ok bool) {
	for ; i >= 0; i = d.Elements[i].Parent {
		for _, ns := range d.NSDeclsOf(i) {
			if ns.Prefix == prefix {
				return ns.URI, true
			}
		}
	}
	if prefix == "xml" {
		return NamespaceXML, true
	}
	return "", false
}

// Text appends to buf[:0] the character data directly inside element i
// (not its descendants'), with references resolved and line ends
// normalized (XML 1.0 §2.11, §4.6). CDATA sections contribute their content;
// comments contribute nothing (so "a<!--x-->b" gives "ab", as etree's Text
// does). It returns the raw bytes without copying when the content is a
// single text run that needs no normalization.
func (d *Document) Text(i int, buf []byte) []byte {
	e := &d.Elements[i]
	if e.Flags&(FlagTextRef|FlagComment|FlagCDATA) == 0 && !d.HasCR && e.Next == i+1 {
		return d.Data[e.StartEnd:e.EndStart]
	}
	out := buf[:0]
	p, child := e.StartEnd, d.FirstChild(i)
	for p < e.EndStart {
		q := p + indexByteOr(d.Data[p:e.EndStart], '<')
		out, _ = appendText(out, d.Data[p:q]) // validated by Scan
		if q >= e.EndStart {
			break
		}
		switch {
		case child >= 0 && d.Elements[child].Start == q:
			p = d.Elements[child].End
			child = d.NextSibling(child)
		case d.Data[q+2] == '-': // <!--
			p = q + 4 + indexOr(d.Data[q+4:], "-->") + 3
		default: // <![CDATA[
			end := q + 9 + indexOr(d.Data[q+9:], "]]>")
			out = appendLineEnds(out, d.Data[q+9:end])
			p = end + 3
		}
	}
	return out
}
