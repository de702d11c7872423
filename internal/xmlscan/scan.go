package xmlscan

import (
	"bytes"
	"errors"
	"slices"
)

// Scanner is a configured gate. It holds no per-scan state and is safe for
// concurrent use; per-scan state lives in the Document.
type Scanner struct {
	lim  Limits
	prot []Name
	only []Name
	// skip has bit nameLenBit(n) set when no name of prot or only has a
	// local part of n bytes: open looks those lists up for the other
	// elements only (issue 14: once per element of every message).
	skip uint64
}

// nameLenBit is the bit of Scanner.skip for a local name of n bytes; all
// lengths from 63 on share the last bit.
func nameLenBit(n int) uint64 { return 1 << min(n, 63) }

// NewScanner returns a Scanner for c. Zero limits take their defaults.
func NewScanner(c Config) (*Scanner, error) {
	if err := c.Limits.Validate(); err != nil {
		return nil, err
	}
	for _, n := range c.NoCommentsIn {
		if n.Local == "" {
			return nil, errors.New("xmlscan: NoCommentsIn entry with an empty local name")
		}
	}
	for _, n := range c.ElementOnly {
		if n.Local == "" {
			return nil, errors.New("xmlscan: ElementOnly entry with an empty local name")
		}
	}
	s := &Scanner{lim: c.Limits.withDefaults(), prot: slices.Clone(c.NoCommentsIn), only: slices.Clone(c.ElementOnly), skip: ^uint64(0)}
	for _, n := range append(slices.Clone(s.prot), s.only...) {
		s.skip &^= nameLenBit(len(n.Local))
	}
	return s, nil
}

// Limits returns the effective limits (defaults filled in).
func (s *Scanner) Limits() Limits { return s.lim }

var defaultScanner, _ = NewScanner(DefaultConfig())

// Scan gates data with DefaultConfig. See Scanner.Scan.
func Scan(data []byte, d *Document) error { return defaultScanner.Scan(data, d) }

// Scan checks that data is a document the gate accepts and records its
// structure in d, which is reset first. It returns nil or an *Error. On
// success d.Data is data (not copied).
func (s *Scanner) Scan(data []byte, d *Document) error {
	d.Reset()
	d.Data = data
	st := state{lim: &s.lim, prot: s.prot, only: s.only, skip: s.skip, d: d, data: data, cur: -1}
	if err := st.run(); err != nil {
		return err
	}
	return nil
}

// state is the scan in progress.
type state struct {
	lim  *Limits
	prot []Name
	only []Name
	skip uint64 // Scanner.skip; zero (never skip) is always correct
	d    *Document
	data []byte

	cur       int  // index of the innermost open element, -1 outside the root
	protected int  // open elements that are in Config.NoCommentsIn
	elemOnly  bool // the current element is in Config.ElementOnly
	nsDecls   int  // namespace declarations so far

	// the start tag being scanned
	tagFlags Flags
}

// frame is the per-open-element state not kept in Element.
type frame struct {
	textLen  int     // character data seen directly in the element
	class    nsClass // class of the element's namespace
	elemOnly bool    // the element is in Config.ElementOnly
	// nameLen and nameW0, nameW1 are the element's qualified name as
	// wordName's words when it has at most shortName bytes, so endTag
	// compares two words (issue 14); nameLen 0: compare the bytes.
	nameLen        uint8
	nameW0, nameW1 uint64
}

func (st *state) run() *Error {
	if len(st.data) > st.lim.MaxBytes {
		return newError(KindLimitBytes, st.lim.MaxBytes, "document too large")
	}
	p, err := st.prolog()
	if err != nil {
		return err
	}
	if p, err = st.beforeRoot(p); err != nil {
		return err
	}
	if p, err = st.content(p); err != nil {
		return err
	}
	return st.afterRoot(p)
}

// beforeRoot skips the white space before the root element (XML 1.0 §2.8
// [22] prolog; Misc is restricted to S: SOAP forbids PIs and a DTD, and the
// gate forbids comments outside the root) and returns the root's offset.
func (st *state) beforeRoot(p int) (int, *Error) {
	data := st.data
	p = skipSpace(data, p)
	switch {
	case p >= len(data):
		return p, newError(KindNoRoot, p, "no root element")
	case data[p] != '<':
		return p, newError(KindOutsideRoot, p, "text before the root element")
	case p+1 >= len(data):
		return p, newError(KindEOF, p, "unexpected end of input")
	}
	switch data[p+1] {
	case '?':
		return p, piError(data, p)
	case '!':
		return p, st.bangOutside(p)
	case '/':
		return p, newError(KindTagMismatch, p, "end tag before the root element")
	}
	return p, nil
}

// afterRoot accepts only white space after the root element: a second
// element makes two roots (§2.1 [1] document ::= prolog element Misc*).
func (st *state) afterRoot(p int) *Error {
	data := st.data
	p = skipSpace(data, p)
	switch {
	case p >= len(data):
		return nil
	case data[p] != '<' || p+1 >= len(data):
		return newError(KindOutsideRoot, p, "content after the root element")
	}
	switch data[p+1] {
	case '?':
		return piError(data, p)
	case '!':
		return st.bangOutside(p)
	case '/':
		return newError(KindTagMismatch, p, "end tag after the root element")
	}
	return newError(KindMultipleRoots, p, "second top-level element")
}

// content scans from the root's start tag at p until the root closes and
// returns the offset after it.
func (st *state) content(p int) (int, *Error) {
	data := st.data
	for {
		var err *Error
		if p+1 >= len(data) {
			return p, newError(KindEOF, p, "unexpected end of input")
		}
		switch data[p+1] {
		case '/':
			p, err = st.endTag(p)
		case '!':
			p, err = st.bang(p)
		case '?':
			err = piError(data, p)
		default:
			p, err = st.startTag(p)
		}
		if err != nil {
			return p, err
		}
		if st.cur < 0 {
			return p, nil
		}
		// Most markup follows markup directly: no call to find it.
		j := 0
		if p >= len(data) || data[p] != '<' {
			j = bytes.IndexByte(data[p:], '<')
		}
		if j < 0 {
			return len(data), newError(KindEOF, len(data), "unclosed element "+st.d.Elements[st.cur].Local)
		}
		if j > 0 {
			if err := st.text(p, p+j); err != nil {
				return p, err
			}
		}
		p += j
	}
}

// text checks the character data data[p:q] of the current element: the
// length limit, references (WFC: Legal Character, WFC: Entity Declared) and
// "]]>" (§2.4). Chars and '<' were already excluded.
func (st *state) text(p, q int) *Error {
	seg := st.data[p:q]
	if st.elemOnly && !allSpace(seg) {
		return st.elementOnlyError(skipSpace(st.data, p), "character data or a reference")
	}
	if err := st.addText(p, len(seg)); err != nil {
		return err
	}
	if bytes.IndexByte(seg, '&') >= 0 {
		if err := checkRefs(seg, p); err != nil {
			return err
		}
		st.d.Elements[st.cur].Flags |= FlagTextRef | FlagRef
	}
	if i := bytes.Index(seg, []byte("]]>")); i >= 0 {
		return newError(KindCDATAEnd, p+i, "']]>' in character data")
	}
	return nil
}

// addText counts n bytes of character data at offset p against the text
// limit of the current element (MaxBase64Len in the security namespaces).
func (st *state) addText(p, n int) *Error {
	f := &st.d.scratch.frames[len(st.d.scratch.frames)-1]
	limit, kind := st.lim.MaxTextLen, KindLimitText
	if f.class&classB64 != 0 {
		limit, kind = st.lim.MaxBase64Len, KindLimitBase64
	}
	f.textLen += n
	if f.textLen > limit {
		return newError(kind, p+n-(f.textLen-limit), "character data too long in "+st.d.Elements[st.cur].Local)
	}
	return nil
}

// bang handles "<!" inside the root: a comment, a CDATA section, or a
// forbidden markup declaration.
func (st *state) bang(p int) (int, *Error) {
	rest := st.data[p:]
	switch {
	case bytes.HasPrefix(rest, []byte("<!--")):
		return st.comment(p)
	case bytes.HasPrefix(rest, []byte("<![CDATA[")):
		return st.cdata(p)
	}
	return p, declError(rest, p)
}

// bangOutside handles "<!" outside the root element.
func (st *state) bangOutside(p int) *Error {
	rest := st.data[p:]
	if bytes.HasPrefix(rest, []byte("<!--")) || bytes.HasPrefix(rest, []byte("<![CDATA[")) {
		return newError(KindOutsideRoot, p, "comment or CDATA outside the root element")
	}
	return declError(rest, p)
}

// declError classifies a "<!" that is neither a comment nor CDATA. Any
// markup declaration is refused (SOAP 1.1 §3, SOAP 1.2 Part 1 §5: no DTD;
// security.md B1/B2: XXE, billion laughs).
func declError(rest []byte, p int) *Error {
	switch {
	case len(rest) >= 9 && bytes.EqualFold(rest[:9], []byte("<!DOCTYPE")):
		return newError(KindDoctype, p, "document type declaration")
	case len(rest) > 2 && (isASCIILetter(rest[2]) || rest[2] == '['):
		return newError(KindDirective, p, "markup declaration")
	case bytes.HasPrefix([]byte("<!--"), rest) || bytes.HasPrefix([]byte("<![CDATA["), rest):
		return newError(KindEOF, p, "unexpected end of input")
	}
	return newError(KindSyntax, p, "malformed '<!' construct")
}

func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// piError rejects a processing instruction (SOAP 1.1 §3, SOAP 1.2 Part 1
// §5: none allowed; the XML declaration is not a PI and only allowed at the
// start, XML 1.0 §2.8 [23]).
func piError(data []byte, p int) *Error {
	if isDeclStart(data[p:]) {
		return newError(KindPI, p, "XML declaration not at the start of the document")
	}
	return newError(KindPI, p, "processing instruction")
}

// comment scans "<!--...-->" at p. "--" must not occur inside a comment
// (XML 1.0 §2.5 [15]), so the first "--" must be the terminator's.
func (st *state) comment(p int) (int, *Error) {
	data := st.data
	k := bytes.Index(data[p+4:], []byte("--"))
	if k < 0 || p+4+k+2 >= len(data) {
		return p, newError(KindEOF, p, "unterminated comment")
	}
	end := p + 4 + k + 2
	if data[end] != '>' {
		return p, newError(KindSyntax, p+4+k, "'--' inside a comment")
	}
	if st.protected > 0 {
		return p, newError(KindProtectedComment, p, "comment inside a protected element")
	}
	if st.elemOnly {
		return p, st.elementOnlyError(p, "a comment")
	}
	st.misc(NodeComment, p, end+1, FlagComment)
	return end + 1, nil
}

// cdata scans "<![CDATA[...]]>" at p (XML 1.0 §2.7). Its content is
// character data and counts against the element's text limit.
func (st *state) cdata(p int) (int, *Error) {
	data := st.data
	k := bytes.Index(data[p+9:], []byte("]]>"))
	if k < 0 {
		return p, newError(KindEOF, p, "unterminated CDATA section")
	}
	if st.protected > 0 {
		return p, newError(KindProtectedCDATA, p, "CDATA section inside a protected element")
	}
	if st.elemOnly {
		return p, st.elementOnlyError(p, "a CDATA section")
	}
	if err := st.addText(p+9, k); err != nil {
		return p, err
	}
	end := p + 9 + k + 3
	st.misc(NodeCDATA, p, end, FlagCDATA)
	return end, nil
}

// elementOnlyError rejects what at offset p in the content of an element
// of Config.ElementOnly.
func (st *state) elementOnlyError(p int, what string) *Error {
	return newError(KindElementOnly, p, what+" directly inside "+st.d.Elements[st.cur].Local)
}

func (st *state) misc(kind NodeKind, start, end int, f Flags) {
	st.d.Misc = append(st.d.Misc, Node{Kind: kind, Span: Span{start, end}, Parent: st.cur})
	st.d.Elements[st.cur].Flags |= f
}
