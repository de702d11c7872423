package testtraffic

import (
	"fmt"
	"strings"
)

// Where the payload's namespace is declared (Generator.Variety).
const (
	declRoot     = iota // on the operation element, as stacks write it
	declBody            // on soap:Body: inherited into the signed subtree
	declEnvelope        // on soap:Envelope: in scope at the Body, outside it
)

// variety is how one message's payload is written when Generator.Variety is
// on: drawn per message, so that a few messages of one operation already
// differ in everything a receiver must treat as equal or as different.
type variety struct {
	g      *Generator
	st     *stack
	pfx    string // the payload elements' prefix with its colon, "" = default namespace
	declAt int    // declRoot, declBody or declEnvelope
	decl   string // the declaration of the payload namespace
	// list is how list containers redeclare namespaces mid-tree: 0 not,
	// 1 the same binding again, 2 another prefix for the same URI,
	// 3 the default namespace for the same URI, 4 the same prefix bound
	// to another URI.
	list   int
	unused bool // an unused declaration on the operation element
	// extAttr declares a prefix on the operation element that only list
	// items' attributes use: exclusive C14N renders it on each item.
	extAttr bool
	ext     bool // an extension element in no namespace (xmlns="")
	indent  bool // newlines and spaces between payload elements
	refs    bool // characters written as references at random
	depth   int
}

// shadowing are prefixes a payload may bind to its own namespace inside
// the Body although the envelope or the Security header binds them to
// SOAP, WS-Addressing, WS-Security or XML-DSig outside it.
func shadowing(st *stack) []string {
	return []string{st.soapPfx, st.wsaPfx, "wsse", "wsu", "ds"}
}

func (g *Generator) drawVariety(st *stack, op *operation) *variety {
	r := g.r
	v := &variety{g: g, st: st, list: r.IntN(5), unused: r.IntN(4) == 0, ext: r.IntN(4) == 0,
		indent: r.IntN(3) == 0, refs: r.IntN(2) == 0, extAttr: r.IntN(3) == 0}
	switch k := r.IntN(8); {
	case k < 2: // the stack's own form
		if _, pfx := st.payload(op); pfx != "" {
			v.pfx = pfx
		}
	case k < 4:
		v.pfx = ""
	case k < 6:
		v.pfx = []string{"tns:", "m:", "ns2:"}[r.IntN(3)]
	default:
		sh := shadowing(st)
		v.pfx = sh[r.IntN(len(sh))] + ":"
	}
	if v.pfx == "" {
		v.decl = fmt.Sprintf(` xmlns="%s"`, op.ns)
	} else {
		v.decl = fmt.Sprintf(` xmlns:%s="%s"`, strings.TrimSuffix(v.pfx, ":"), op.ns)
	}
	// A prefix that shadows the envelope's must be declared inside the
	// Body; the default namespace on the Envelope would not reach the
	// prefixed SOAP elements, so it may be declared anywhere.
	if !v.shadows() {
		v.declAt = r.IntN(3)
	}
	return v
}

func (v *variety) shadows() bool {
	for _, p := range shadowing(v.st) {
		if v.pfx == p+":" {
			return true
		}
	}
	return false
}

// on is the payload's namespace declaration when it belongs on the
// element at place.
func (v *variety) on(place int) string {
	if v == nil || v.declAt != place || place == declRoot {
		return ""
	}
	return v.decl
}

// deeper is v one level down (list items' fields), nil for nil.
func (v *variety) deeper() *variety {
	if v == nil {
		return nil
	}
	d := *v
	d.depth = 2
	return &d
}

// indentTo writes a newline and the indentation of level when v indents.
func (v *variety) indentTo(b *strings.Builder, level int) {
	if v == nil || !v.indent {
		return
	}
	b.WriteString("\n" + strings.Repeat("  ", level+1))
}

// openRoot writes the operation element's start tag and returns the
// prefix its children use.
func (v *variety) openRoot(b *strings.Builder, op *operation) string {
	v.indentTo(b, -1)
	fmt.Fprintf(b, `<%s%s`, v.pfx, op.name)
	if v.declAt == declRoot {
		b.WriteString(v.decl)
	} else if v.g.r.IntN(3) == 0 {
		b.WriteString(v.decl) // declared again where it is already in scope
	}
	if v.unused {
		b.WriteString(` xmlns:unused="urn:example:unused"`)
	}
	if v.extAttr {
		b.WriteString(` xmlns:ext="urn:example:ext"`)
	}
	if v.g.r.IntN(3) == 0 {
		v.attr(b, "version", "2.1", v.g.r.IntN(2) == 0)
	}
	if v.g.r.IntN(3) == 0 {
		v.sortTraps(b)
	}
	b.WriteString(">")
	return v.pfx
}

// sortTraps writes attributes whose canonical order (C14N 1.0 §2.2: by
// namespace URI, then local name; unqualified first) differs from the
// order of their qualified names: za: is bound to the URI that sorts
// first, xml:'s URI sorts before both, and they come in a random order.
func (v *variety) sortTraps(b *strings.Builder) {
	b.WriteString(` xmlns:za="urn:example:attrs:a" xmlns:ab="urn:example:attrs:z"`)
	attrs := []string{`za:code="1"`, `ab:code="2"`, `code="3"`, `xml:lang="en"`, `ab:a="4"`}
	v.g.r.Shuffle(len(attrs), func(i, j int) { attrs[i], attrs[j] = attrs[j], attrs[i] })
	for _, a := range attrs {
		b.WriteString(" " + a)
	}
}

// openList writes a list container's start tag, redeclaring namespaces
// as v.list says, and returns the prefix of its items.
func (v *variety) openList(b *strings.Builder, op *operation, name string) string {
	switch v.list {
	case 1:
		fmt.Fprintf(b, `<%s%s%s>`, v.pfx, name, v.decl)
		return v.pfx
	case 2:
		fmt.Fprintf(b, `<q:%s xmlns:q="%s">`, name, op.ns)
		return "q:"
	case 3:
		if v.pfx != "" {
			fmt.Fprintf(b, `<%s xmlns="%s">`, name, op.ns)
			return ""
		}
		fmt.Fprintf(b, `<q:%s xmlns:q="%s">`, name, op.ns)
		return "q:"
	case 4:
		if v.pfx == "" {
			fmt.Fprintf(b, `<%s xmlns="%s:lists">`, name, op.ns)
		} else {
			fmt.Fprintf(b, `<%s%s xmlns:%s="%s:lists">`, v.pfx, name, strings.TrimSuffix(v.pfx, ":"), op.ns)
		}
		return v.pfx
	}
	fmt.Fprintf(b, `<%s%s>`, v.pfx, name)
	return v.pfx
}

// extension writes an element in no namespace: xmlns="" undeclares a
// default namespace in scope, and is a no-op declaration where none is.
func (g *Generator) extension(b *strings.Builder, v *variety) {
	fmt.Fprintf(b, `<Extension xmlns=""><Key>k%d</Key><Value>`, g.r.IntN(100))
	g.text(b, v)
	b.WriteString(`</Value></Extension>`)
}

// openItem writes a list item's start tag: its number and, sometimes, a
// note whose value attribute-value normalization changes, in either order.
func (g *Generator) openItem(b *strings.Builder, v *variety, qname string, no int) {
	fmt.Fprintf(b, `<%s`, qname)
	note := g.r.IntN(3) == 0
	first := g.r.IntN(2) == 0
	if note && first {
		v.attr(b, "note", attrTexts[g.r.IntN(len(attrTexts))], g.r.IntN(2) == 0)
	}
	v.attr(b, "no", fmt.Sprint(no), g.r.IntN(4) == 0)
	if v.extAttr && g.r.IntN(2) == 0 {
		b.WriteString(` ext:flag="y"`)
	}
	if note && !first {
		v.attr(b, "note", attrTexts[g.r.IntN(len(attrTexts))], g.r.IntN(2) == 0)
	}
	b.WriteString(">")
}

// emptyElement writes, now and then, an optional element present but
// empty, in one of its forms, and reports whether it did.
func (g *Generator) emptyElement(b *strings.Builder, qname string) bool {
	if g.r.IntN(20) != 0 {
		return false
	}
	b.WriteString([]string{`<` + qname + `/>`, `<` + qname + ` />`, `<` + qname + `></` + qname + `>`}[g.r.IntN(3)])
	return true
}

// moreTexts are what the variety adds to texts: CDATA's end marker, CR
// alone and in CRLF, apostrophes, text that looks like markup or like
// an entity, a no-break space and a character outside the BMP.
var moreTexts = []string{
	"]]> end", "carriage\rreturn", "line\r\nbreak", "it's", "&amp; literal", "<tag/> as text",
	"\u00a0non-breaking", "𝔘nicode astral", "trailing space ", " leading", "a]]b>c",
}

// attrTexts are attribute values with what attribute-value normalization
// changes (XML 1.0 §3.3.3): tabs, newlines and CR become spaces when raw
// and stay when written as references; both quote styles occur.
var attrTexts = []string{
	"a\tb", "line1\nline2", "crlf\r\nend", `say "hi"`, "it's", "x < y & z", "  spaced  ", "a > b", "Müller", "plain",
}

// text writes one payload text in one of the forms v allows.
func (g *Generator) text(b *strings.Builder, v *variety) {
	var s string
	if k := g.r.IntN(len(texts) + len(moreTexts)); k < len(texts) {
		s = texts[k]
	} else {
		s = moreTexts[k-len(texts)]
	}
	if strings.Contains(s, "\r\n") && v.g.r.IntN(2) == 0 {
		// Raw CRLF, which end-of-line handling makes LF.
		for i, part := range strings.Split(s, "\r\n") {
			if i > 0 {
				b.WriteString("\r\n")
			}
			v.chars(b, part)
		}
		return
	}
	v.chars(b, s)
}

// chars writes s as character data.
func (v *variety) chars(b *strings.Builder, s string) {
	prev := []rune{0, 0}
	for _, c := range s {
		v.char(b, c, prev, false, '"')
		prev[0], prev[1] = prev[1], c
	}
}

// attr writes ` name="value"` (or single-quoted) in one of the forms v
// allows.
func (v *variety) attr(b *strings.Builder, name, value string, single bool) {
	q := '"'
	if single {
		q = '\''
	}
	fmt.Fprintf(b, ` %s=%c`, name, q)
	for _, c := range value {
		v.char(b, c, nil, true, q)
	}
	b.WriteRune(q)
}

// char writes c as character data (prev: the two characters before it)
// or inside an attribute quoted with q, raw where the grammar allows and
// a random choice of the allowed forms when v.refs is on.
func (v *variety) char(b *strings.Builder, c rune, prev []rune, inAttr bool, q rune) {
	pick := func(forms ...string) {
		if !v.refs {
			b.WriteString(forms[0])
			return
		}
		b.WriteString(forms[v.g.r.IntN(len(forms))])
	}
	hex, dec := fmt.Sprintf("&#x%X;", c), fmt.Sprintf("&#%d;", c)
	switch {
	case c == '&':
		pick("&amp;", hex, dec)
	case c == '<':
		pick("&lt;", dec)
	case c == '>':
		if !inAttr && prev[0] == ']' && prev[1] == ']' {
			pick("&gt;", hex) // "]]>" may not occur in character data
		} else {
			pick("&gt;", ">", dec)
		}
	case c == q && inAttr:
		if q == '"' {
			pick("&quot;", dec)
		} else {
			pick("&apos;", hex)
		}
	case c == '"' || c == '\'':
		pick(string(c), hex)
	case c == '\r' && !inAttr:
		// A raw CR only survives as part of CRLF (end-of-line handling
		// makes it LF); alone it is written as a reference.
		pick("&#xD;", "&#13;")
	case c == '\r', c == '\t', c == '\n':
		pick(string(c), hex, dec)
	case c > 0x7f:
		pick(string(c), hex, dec)
	case v.refs && v.g.r.IntN(50) == 0:
		b.WriteString(dec) // now and then even a letter
	default:
		b.WriteRune(c)
	}
}
