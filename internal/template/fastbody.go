package template

import (
	"bytes"
	"encoding/binary"
	"hash"
	"sync/atomic"
	"unicode/utf8"

	"github.com/wssgw/wssgw/internal/c14n"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// The fast body (issue 14): the content of a generic Body checked and
// canonicalized in one pass over its bytes, the canonical form written
// straight into the digest, with no Document built. It accepts a strict
// subset of what the gate accepts, and canonicalizes it as exclusive C14N
// does (c14n's walk: exc-c14n §3 namespace rendering, C14N 1.0 §2.3
// escaping); anything outside the subset (a comment, CDATA, a processing
// instruction, a carriage return, a non-ASCII name, a reference it does
// not know, a limit within reach) is "not handled", and the hit path gates
// the message and canonicalizes the Body from the gate's Document instead
// (run.generic). Whatever it accepts, the gate accepts: it checks every
// well-formedness and namespace rule and every limit the gate applies to
// the Body's content, with the counts of the constant rest of the message
// (bodyAt) added in, and it refuses everything genericContent refuses.

// fastCtx is what the fast body needs of the constant part of a message:
// the namespace bindings in scope at the Body, those exclusive C14N
// renders on the Body start tag, the PrefixList, and the gate's counts
// outside the Body content.
type fastCtx struct {
	scope    []nsb // in scope at the Body, innermost last
	rendered []nsb // rendered on the Body's canonical start tag
	prefixes []string
	listed   bool // prefixes is not empty

	depth    int // the Body's depth
	elements int // elements outside the Body content
	nsDecls  int // namespace declarations outside the Body content
	plain    plainKind

	// memo: what an accepted message taught (fastbody_memo.go),
	// immutable once published; misses counts the runs it did not fit.
	memo   atomic.Pointer[fastMemo]
	misses atomic.Uint32
}

// nsb is a namespace binding; the default namespace has prefix "".
type nsb struct {
	prefix, uri []byte
}

// fastAttr is an attribute of the start tag being canonicalized.
type fastAttr struct {
	qname, prefix, local []byte
	space                []byte
	value                []byte // raw, between the quotes
	norm                 bool   // value needs attribute-value normalization
}

// fastOpen is an open element, small because one is pushed per element:
// its qualified name and prefix are offsets into the data.
type fastOpen struct {
	// space: the element's namespace, fb.spaces[space], in effect in
	// the output after its start tag (known: not the Body, whose is the
	// context's).
	space    int32
	qs       int32 // the qualified name is data[qs:qs+qn]
	qn       int32
	pn       int32 // the prefix is data[qs:qs+pn]
	scope    int32 // len(fb.scope) before its declarations
	rendered int32 // len(fb.rend) before its start tag
	text     int32 // raw character data directly inside it
	// kind: elements of one kind have the same prefix and namespace
	// (simpleTag's children inherit their parent's); 0 is the Body's.
	kind  int32
	known bool
}

func (o *fastOpen) qname(data []byte) []byte  { return data[o.qs : o.qs+o.qn] }
func (o *fastOpen) prefix(data []byte) []byte { return data[o.qs : o.qs+o.pn] }

// fastBody is the state of one pass; runs keep one.
type fastBody struct {
	lim   *xmlscan.Limits
	only  []xmlscan.Name // the gate's ElementOnly elements
	ctx   *fastCtx
	data  []byte
	h     hash.Hash // nil: check only
	sha   *shaNI    // h when it is SHA-NI's, which the sibling kernel hashes into
	kh    kernHash  // replayKern's, for the kernel
	out   []byte    // canonical output not yet hashed
	mark  int       // data before mark is in out or hashed
	scope []nsb
	rend  []nsb
	open  []fastOpen
	attrs []fastAttr
	decls []nsb
	cand  []nsb
	elems int
	decl  int
	tops  int // elements directly in the Body
	// onlyLens has bit n set when an ElementOnly local name is n bytes
	// long (63: longer): most names are rejected without a compare.
	onlyLens uint64

	// The structural scan (fastbody_scan.go): the content is
	// data[base:end], nblk 64-byte blocks (the last padded); win holds
	// the stopText masks of blocks wb..wb+wn-1, then their stopAttr
	// masks.
	base, end, nblk int
	wb, wn          int
	lo, wlen        int // the window is data[lo:lo+wlen]
	win             *[2 * scanWin]uint64
	shapes          []tagShape // by depth: the last start tag simpleTag checked
	spaces          [][]byte   // the namespaces of open elements
	kinds           int32      // fastOpen.kind given out
	rec             recorder   // sibling replay (fastbody_replay.go)
	memo            memoState  // the template's memo (fastbody_memo.go)
	spills          int        // hash writes of out
}

const fastFlush = 16 << 10

// run checks and canonicalizes data[start:end], the Body's content, into
// h. It reports whether the content is in the handled subset; a false is
// no verdict.
func (fb *fastBody) run(data []byte, start, end int, ctx *fastCtx, lim *xmlscan.Limits, h hash.Hash) bool {
	fb.data, fb.ctx, fb.lim, fb.h = data, ctx, lim, h
	fb.sha, _ = h.(*shaNI)
	fb.out, fb.mark = fb.out[:0], start
	fb.base, fb.end, fb.nblk, fb.wb, fb.wn, fb.lo, fb.wlen = start, end, (end-start+63)/64, 0, 0, start, 0
	fb.scope = append(fb.scope[:0], ctx.scope...)
	fb.rend = append(fb.rend[:0], ctx.rendered...)
	fb.open = append(fb.open[:0], fastOpen{scope: int32(len(fb.scope)), rendered: int32(len(fb.rend))}) // the Body
	fb.elems, fb.decl, fb.tops = ctx.elements, ctx.nsDecls, 0
	fb.onlyLens = 0
	fb.shapes = fb.shapes[:0] // offsets into the last data
	fb.spaces, fb.kinds = fb.spaces[:0], 0
	fb.rec.reset()
	fb.memoStart()
	for _, n := range fb.only {
		fb.onlyLens |= 1 << min(len(n.Local), 63)
	}
	if int64(end-start) >= 1<<31 {
		return false // offsets are int32
	}
	p := start
	for {
		// Character data, from stop to stop (fastbody_scan.go); most
		// tags follow a tag.
		ts := p
		for p == end || data[p] != '<' {
			q, ok := fb.peek(p, 0)
			if !ok {
				q = fb.next(p, 0)
			}
			if q == end || data[q] == '<' {
				p = q
				break
			}
			if p, ok = fb.textStop(ts, q); !ok {
				return false
			}
		}
		if p > ts {
			o := &fb.open[len(fb.open)-1]
			if o.text += int32(p - ts); int(o.text) > fb.lim.MaxTextLen {
				return false
			}
			if fb.rec.on {
				// The replay checks that the new text is canonical as
				// it is, whatever this one was.
				fb.recText(ts, p)
			}
		}
		if p == end {
			break
		}
		q := p
		if q+1 >= end {
			return false
		}
		var ok bool
		switch data[q+1] {
		case '/':
			p, ok = fb.endTag(q, end)
		case '!', '?':
			return false // comment, CDATA, PI: the gate's Document decides
		default:
			first := fb.kinds == 0 && fb.firstTag()
			if first && fb.memo.m != nil {
				if p = fb.memoTag(q); p != 0 {
					continue
				}
			}
			if p = fb.replay(q); p != 0 {
				continue
			}
			var out0, mark0 int
			if first {
				out0, mark0, fb.memo.spills = len(fb.out), fb.mark, fb.spills
			}
			if p, ok = fb.simpleTag(q, end); p == 0 {
				fb.rec.on = false // a subtree of simple tags only is recorded
				if p, ok = fb.startTag(q, end); ok && first {
					fb.memoSeen(q, p, out0, mark0)
				}
			}
		}
		if !ok {
			return false
		}
	}
	if len(fb.open) != 1 {
		return false
	}
	if ctx.plain == plainElement && (fb.tops != 1 || fb.open[0].text != 0 || data[start] != '<' || data[end-1] != '>') {
		return false // checkPlaintext: exactly one element
	}
	fb.sync(end)
	fb.spill()
	fb.memoEnd()
	return true
}

// flush hands the output to the hash once fastFlush bytes are buffered:
// one Write per 16 KiB, not one per piece (small enough to inline).
func (fb *fastBody) flush() {
	if len(fb.out) >= fastFlush {
		fb.spill()
	}
}

// sync emits the input from mark up to x as it is: what the canonical
// form shares with the input (most of it) is never copied piece by
// piece, and a long run goes to the hash without a copy.
func (fb *fastBody) sync(x int) {
	if x-fb.mark >= fastFlush || fb.h == nil {
		fb.syncLong(x)
		return
	}
	fb.out = append(fb.out, fb.data[fb.mark:x]...)
	fb.mark = x
}

func (fb *fastBody) syncLong(x int) {
	if fb.h != nil && x > fb.mark {
		fb.spill()
		fb.h.Write(fb.data[fb.mark:x])
	}
	fb.mark = x
}

//go:noinline
func (fb *fastBody) spill() {
	fb.spills++
	if fb.h != nil {
		fb.h.Write(fb.out)
	}
	fb.out = fb.out[:0]
}

// textStop handles the stopText byte at i (not '<') of the run of
// character data that started at ts, and returns where the run goes on.
func (fb *fastBody) textStop(ts, i int) (int, bool) {
	data := fb.data
	switch c := data[i]; {
	case c == '>':
		if i >= ts+2 && data[i-1] == ']' && data[i-2] == ']' {
			return 0, false // "]]>" in text: not well-formed
		}
		fb.sync(i)
		fb.out = append(fb.out, "&gt;"...)
		fb.mark = i + 1
		fb.flush()
		return i + 1, true
	case c == '&':
		r, n := charRef(data[i:fb.end])
		if n == 0 {
			return 0, false
		}
		fb.sync(i)
		fb.out = appendTextRune(fb.out, r)
		fb.mark = i + n
		fb.flush()
		return i + n, true
	case c >= 0x80:
		// Copied as it is: valid UTF-8 of XML characters. A non-ASCII
		// run is taken whole, not stop by stop.
		for i < fb.end && data[i] >= 0x80 {
			r, n := utf8.DecodeRune(data[i:fb.end])
			if r == utf8.RuneError || !xmlChar(r) {
				return 0, false
			}
			i += n
		}
		return i, true
	}
	return 0, false // control characters, CR
}

// charRef decodes a predefined entity or character reference at the start
// of v (refLen's grammar) and returns the character and its length, or
// n == 0.
func charRef(v []byte) (rune, int) {
	n := refLen(v)
	if n == 0 {
		return 0, 0
	}
	switch string(v[:n]) {
	case "&amp;":
		return '&', n
	case "&lt;":
		return '<', n
	case "&gt;":
		return '>', n
	case "&quot;":
		return '"', n
	case "&apos;":
		return '\'', n
	}
	var r rune
	hex := v[2] == 'x'
	for _, c := range v[2 : n-1] {
		switch {
		case c == 'x':
		case c >= '0' && c <= '9':
			r = r*base(hex) + rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r*16 + rune(c-'a'+10)
		default:
			r = r*16 + rune(c-'A'+10)
		}
	}
	return r, n
}

// appendTextRune appends a character of a text node escaped as C14N 1.0
// §2.3 requires (c14n.AppendText: the rule is written once).
func appendTextRune(dst []byte, r rune) []byte {
	var b [utf8.UTFMax]byte
	return c14n.AppendText(dst, utf8.AppendRune(b[:0], r))
}

// appendAttrRune appends a character of an attribute value escaped as
// C14N 1.0 §2.3 requires (c14n.AppendAttr).
func appendAttrRune(dst []byte, r rune) []byte {
	var b [utf8.UTFMax]byte
	return c14n.AppendAttr(dst, utf8.AppendRune(b[:0], r))
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipS(data []byte, p, end int) int {
	for p < end && isSpace(data[p]) {
		p++
	}
	return p
}

// name scans an ASCII QName at p: NCName (':' NCName)?. It returns the end
// and the colon's offset (-1 without prefix), or end == p when there is no
// name it handles.
func name(data []byte, p, end int) (int, int) {
	colon := -1
	q := p
	for q < end {
		switch nameClass[data[q]] {
		case nameStart:
		case nameChar:
			if q == p || q == colon+1 {
				return p, -1
			}
		case nameColon:
			if colon >= 0 || q == p {
				return p, -1
			}
			colon = q
		default:
			if colon == q-1 {
				return p, -1
			}
			return q, colon
		}
		q++
	}
	return p, -1 // a name runs to the end of the content: not a tag
}

const (
	nameOther = iota
	nameStart // ASCII letters and '_'
	nameChar  // digits, '-', '.'
	nameColon
)

var nameClass = func() (t [256]uint8) {
	for c := range t {
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_':
			t[c] = nameStart
		case c >= '0' && c <= '9' || c == '-' || c == '.':
			t[c] = nameChar
		case c == ':':
			t[c] = nameColon
		}
	}
	return t
}()

// lookup is the URI bound to prefix in scope, or ok false.
func (fb *fastBody) lookup(prefix []byte) ([]byte, bool) {
	for k := len(fb.scope) - 1; k >= 0; k-- {
		if bytes.Equal(fb.scope[k].prefix, prefix) {
			return fb.scope[k].uri, true
		}
	}
	if len(prefix) == 0 {
		return nil, true // no default namespace
	}
	if string(prefix) == "xml" {
		return []byte(xmlscan.NamespaceXML), true
	}
	return nil, false
}

// effective is the URI rendered in effect in the output for prefix.
func (fb *fastBody) effective(prefix []byte) []byte {
	for k := len(fb.rend) - 1; k >= 0; k-- {
		if bytes.Equal(fb.rend[k].prefix, prefix) {
			return fb.rend[k].uri
		}
	}
	return nil
}

func (fb *fastBody) consider(prefix, uri []byte) {
	if string(prefix) == "xml" {
		return
	}
	for _, b := range fb.cand {
		if bytes.Equal(b.prefix, prefix) {
			return
		}
	}
	if !bytes.Equal(fb.effective(prefix), uri) {
		fb.cand = append(fb.cand, nsb{prefix, uri})
	}
}

// simpleAttrs is how many attributes simpleTag takes.
const simpleAttrs = 8

// simpleTag handles the start tag at q when it is of the common simple
// kind, with no state changed otherwise (p == 0: startTag decides): the
// element's prefix is its parent's and it declares nothing (so its
// namespace is the parent's, already rendered), and its attributes, at
// most simpleAttrs, are unprefixed, written name="value" after one space,
// with values that need neither normalization nor escaping. Then the
// checks are few (no namespace to look up or render) and the canonical
// start tag is the input's, or its attributes' raw pieces reordered: the
// same decisions and bytes as startTag's on such a tag.
func (fb *fastBody) simpleTag(q, end int) (int, bool) {
	data, lim := fb.data, fb.lim
	parent := &fb.open[len(fb.open)-1]
	if !parent.known {
		return 0, false
	}
	var at [simpleAttrs][3]int32 // attribute start (its name), value end (the closing quote), value start
	if s := fb.shapeAt(q, parent); s != nil {
		if p := fb.shapeAttrs(q, end, s, &at); p != 0 {
			return fb.simpleDone(q, q+1+int(s.qn), p, &at, int(s.n), s.sorted, &s.perm, parent)
		}
	}
	p := q + 1
	ne, colon := name(data, p, end)
	if ne == p || ne-p > lim.MaxNameLen {
		return 0, false
	}
	pn := 0
	if colon >= 0 {
		pn = colon - p
	}
	if pn != int(parent.pn) || !eqAt(data, p, int(parent.qs), pn) || ne-p == 5 && string(data[p:ne]) == "xmlns" {
		return 0, false
	}
	var names [simpleAttrs]int32 // attribute name ends
	n := 0
	sorted := true
	p = ne
	for {
		if p >= end {
			return 0, false
		}
		if data[p] == '>' || data[p] == '/' {
			break
		}
		if data[p] != ' ' || n == simpleAttrs {
			return 0, false
		}
		as := p + 1
		ae, c := name(data, as, end)
		if ae == as || c >= 0 || ae-as > lim.MaxNameLen || ae+1 >= end || data[ae] != '=' || data[ae+1] != '"' {
			return 0, false
		}
		switch an := data[as:ae]; len(an) {
		case 2:
			if string(an) == "Id" || string(an) == "ID" {
				return 0, false
			}
		case 5:
			if string(an) == "xmlns" {
				return 0, false
			}
		}
		vs := ae + 2
		// The value ends at the first stopAttr byte when it is plain.
		ve, ok := fb.peek(vs, scanWin)
		if !ok {
			ve = fb.next(vs, scanWin)
		}
		if ve >= end || data[ve] != '"' || ve-vs > lim.MaxAttrValueLen {
			return 0, false
		}
		for k := range n {
			c := cmpAt(data, int(at[k][0]), int(names[k]), as, ae)
			if c == 0 {
				return 0, false
			}
			if k == n-1 && c > 0 {
				sorted = false
			}
		}
		at[n], names[n] = [3]int32{int32(as), int32(ve), int32(vs)}, int32(ae)
		n++
		p = ve + 1
	}
	if data[p] == '/' && (p+1 >= end || data[p+1] != '>') {
		return 0, false
	}
	local := data[q+1 : ne]
	if pn > 0 {
		local = data[q+2+pn : ne]
	}
	if n > lim.MaxAttrs || fb.elementOnly(fb.spaces[parent.space], local) {
		return 0, false
	}
	// Checked: remember the shape for the next sibling of its kind.
	s := fb.shape(len(fb.open))
	*s = tagShape{kind: parent.kind, qs: int32(q + 1), qn: int32(ne - q - 1), n: int32(n), sorted: sorted}
	s.qm, s.qw = wordOf(data, q+1, ne-q-1)
	for k := range n {
		s.names[k] = [2]int32{at[k][0], names[k]}
		s.perm[k] = uint8(k)
		// ` name="`
		s.am[k], s.aw[k] = wordOf(data, int(at[k][0])-1, int(names[k]-at[k][0])+3)
	}
	if !sorted {
		// C14N 1.0 §2.2: unqualified attributes by local name.
		for x := 1; x < n; x++ {
			for y := x; y > 0; y-- {
				a, b := s.names[s.perm[y]], s.names[s.perm[y-1]]
				if cmpAt(data, int(a[0]), int(a[1]), int(b[0]), int(b[1])) >= 0 {
					break
				}
				s.perm[y], s.perm[y-1] = s.perm[y-1], s.perm[y]
			}
		}
	}
	return fb.simpleDone(q, ne, p, &at, n, sorted, &s.perm, parent)
}

// tagShape is a start tag simpleTag checked: the next start tag at its
// depth with the same name and attribute names, in the same order, under
// a parent of the same kind (same prefix and namespace) passes the same
// checks and sorts the same way, so only its attribute values need a
// look (a list's next item, most often).
type tagShape struct {
	kind   int32 // the parent's; 0: no shape
	sorted bool
	qs, qn int32                 // the name: data[qs:qs+qn]
	qm, qw uint64                // its first bytes as a word, and which (wordOf)
	n      int32                 // attributes
	names  [simpleAttrs][2]int32 // attribute name starts and ends
	am, aw [simpleAttrs]uint64   // ` name="` as words (wordOf)
	perm   [simpleAttrs]uint8    // canonical order: perm[k] is the k-th attribute
}

// wordOf is data[i:i+n] as a little-endian word and its mask, for a
// compare in one load; a zero mask when it is longer than a word or too
// close to the end of data.
func wordOf(data []byte, i, n int) (mask, word uint64) {
	if n > 8 || i+8 > len(data) {
		return 0, 0
	}
	mask = ^uint64(0) >> (64 - 8*uint(n))
	return mask, binary.LittleEndian.Uint64(data[i:]) & mask
}

// shape is the shape slot of depth d.
func (fb *fastBody) shape(d int) *tagShape {
	for len(fb.shapes) <= d {
		fb.shapes = append(fb.shapes, tagShape{})
	}
	return &fb.shapes[d]
}

// shapeAt is the shape of the start tag at q's depth when the tag has its
// name and its parent its kind, else nil.
func (fb *fastBody) shapeAt(q int, parent *fastOpen) *tagShape {
	d := len(fb.open)
	if d >= len(fb.shapes) {
		return nil
	}
	s := &fb.shapes[d]
	if s.kind != parent.kind || s.kind == 0 {
		return nil
	}
	if s.qm != 0 && q+9 <= len(fb.data) {
		if binary.LittleEndian.Uint64(fb.data[q+1:])&s.qm != s.qw {
			return nil
		}
	} else if q+1+int(s.qn) > fb.end || !eqAt(fb.data, q+1, int(s.qs), int(s.qn)) {
		// A long name's compare reads past the content no further: a
		// tag cut short at the end of the message ended it.
		return nil
	}
	return s
}

// shapeAttrs matches the attributes of the start tag at q against s and
// finds their plain values; it returns where the tag's end ('>' or "/>")
// is, or 0 when the tag is not of the shape.
func (fb *fastBody) shapeAttrs(q, end int, s *tagShape, at *[simpleAttrs][3]int32) int {
	data := fb.data
	p := q + 1 + int(s.qn)
	for k := range int(s.n) {
		as, nl := int(s.names[k][0]), int(s.names[k][1]-s.names[k][0])
		// ` name="`, the name compared with the shape's.
		if p+nl+3 >= end {
			return 0
		}
		if s.am[k] != 0 && p+8 <= len(data) {
			if binary.LittleEndian.Uint64(data[p:])&s.am[k] != s.aw[k] {
				return 0
			}
		} else if data[p] != ' ' || !eqAt(data, p+1, as, nl) || data[p+1+nl] != '=' || data[p+2+nl] != '"' {
			return 0
		}
		vs := p + nl + 3
		ve, ok := fb.peek(vs, scanWin)
		if !ok {
			ve = fb.next(vs, scanWin)
		}
		if ve >= end || data[ve] != '"' || ve-vs > fb.lim.MaxAttrValueLen {
			return 0
		}
		at[k] = [3]int32{int32(p + 1), int32(ve), int32(vs)}
		p = ve + 1
	}
	if p >= end || data[p] != '>' && (data[p] != '/' || p+1 >= end || data[p+1] != '>') {
		return 0
	}
	return p
}

// simpleDone completes a start tag simpleTag checked, its name ending at
// ne and its end ('>' or "/>") at p: the limits on the element count and
// depth, the canonical start tag (attributes in perm's order unless
// sorted) and the open element.
func (fb *fastBody) simpleDone(q, ne, p int, at *[simpleAttrs][3]int32, n int, sorted bool, perm *[simpleAttrs]uint8, parent *fastOpen) (int, bool) {
	data, lim := fb.data, fb.lim
	if fb.elems+1 > lim.MaxElements || fb.ctx.depth+len(fb.open) > lim.MaxDepth {
		return 0, false
	}
	fb.elems++
	if len(fb.open) == 1 {
		fb.tops++
	}
	empty := data[p] == '/'
	fb.recTag(q, at, n, sorted, perm, empty)
	tagEnd := p // the '>' or the '/' of "/>"
	if empty {
		p += 2
	} else {
		p++
	}
	if !sorted {
		// Up to the name as it is, then each attribute with the one
		// space before it.
		fb.sync(ne)
		out := fb.out
		for k := range n {
			a := at[perm[k]]
			out = append(out, data[a[0]-1:a[1]+1]...)
		}
		fb.out = append(out, '>')
		fb.mark = p
	} else if empty {
		fb.sync(tagEnd)
		fb.out = append(fb.out, '>')
		fb.mark = p
	}
	if empty {
		fb.out = append(append(append(fb.out, "</"...), data[q+1:ne]...), '>')
	} else if e, ok := fb.peek(p, 0); ok && e < fb.end && data[e] == '<' && e-p <= lim.MaxTextLen {
		// A leaf: text that is canonical as it is (no stop before the
		// '<'), then its end tag, written "</name>" (most elements of a
		// payload). Nothing to write or to open: the text is within
		// the limit, and the element's checks are done.
		if k := e + 1 + ne - q; k < fb.end && data[e+1] == '/' && data[k] == '>' && eqAt(data, e+2, q+1, ne-q-1) {
			if fb.rec.on {
				if e > p {
					fb.recText(p, e)
				}
				fb.recEnd(k + 1)
			}
			fb.flush()
			return k + 1, true
		}
		fb.pushSimple(q, ne, parent)
	} else {
		fb.pushSimple(q, ne, parent)
	}
	fb.flush()
	return p, true
}

// pushSimple opens the element of the start tag simpleTag handled at q.
func (fb *fastBody) pushSimple(q, ne int, parent *fastOpen) {
	// Written in place: a record built aside and copied in stalls on
	// store forwarding.
	fb.open = append(fb.open, fastOpen{})
	o := &fb.open[len(fb.open)-1]
	o.space, o.qs, o.qn, o.pn, o.kind = parent.space, int32(q+1), int32(ne-q-1), parent.pn, parent.kind
	o.known, o.scope, o.rendered = true, int32(len(fb.scope)), int32(len(fb.rend))
}

// eqAt reports whether data[i:i+n] and data[j:j+n] are equal; the short
// names of tags are compared in one word, without a call.
func eqAt(data []byte, i, j, n int) bool {
	if n <= 8 && i+8 <= len(data) && j+8 <= len(data) {
		x := binary.LittleEndian.Uint64(data[i:]) ^ binary.LittleEndian.Uint64(data[j:])
		return x<<(64-8*uint(n)) == 0
	}
	return string(data[i:i+n]) == string(data[j:j+n])
}

// cmpAt compares data[as:ae] and data[bs:be] as bytes.Compare does. Names
// of at most 8 bytes are compared as big-endian words with their bytes
// beyond the name cleared: no name byte is zero, so that is their order.
func cmpAt(data []byte, as, ae, bs, be int) int {
	na, nb := ae-as, be-bs
	if na <= 8 && nb <= 8 && as+8 <= len(data) && bs+8 <= len(data) {
		x := binary.BigEndian.Uint64(data[as:]) >> (64 - 8*uint(na)) << (64 - 8*uint(na))
		y := binary.BigEndian.Uint64(data[bs:]) >> (64 - 8*uint(nb)) << (64 - 8*uint(nb))
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	}
	return bytes.Compare(data[as:ae], data[bs:be])
}

// startTag handles the start tag at q.
func (fb *fastBody) startTag(q, end int) (int, bool) {
	data, lim := fb.data, fb.lim
	p := q + 1
	ne, colon := name(data, p, end)
	if ne == p || ne-p > lim.MaxNameLen {
		return 0, false
	}
	qn := data[p:ne]
	var prefix, local []byte
	if colon >= 0 {
		prefix, local = data[p:colon], data[colon+1:ne]
	} else {
		local = qn
	}
	if string(prefix) == "xmlns" || string(prefix) == "xml" || string(qn) == "xmlns" {
		return 0, false // the gate refuses an element named xmlns
	}
	if fb.elems++; fb.elems > lim.MaxElements || fb.ctx.depth+len(fb.open) > lim.MaxDepth {
		return 0, false
	}
	if len(fb.open) == 1 {
		fb.tops++
	}
	fb.attrs, fb.decls = fb.attrs[:0], fb.decls[:0]
	p = ne
	empty := false
	// raw: the tag is written as C14N writes it (one space before each
	// attribute, name="value", no space before the end), so that,
	// unless a namespace node is rendered, a value normalized or the
	// attributes reordered, the canonical start tag is its bytes.
	raw := true
	for {
		s := skipS(data, p, end)
		if s >= end {
			return 0, false
		}
		if data[s] == '>' {
			raw = raw && s == p
			p = s + 1
			break
		}
		if data[s] == '/' {
			if s+1 >= end || data[s+1] != '>' {
				return 0, false
			}
			raw = raw && s == p
			p, empty = s+2, true
			break
		}
		if s == p {
			return 0, false // no white space before an attribute
		}
		raw = raw && s == p+1 && data[p] == ' '
		var ok, tight bool
		if p, tight, ok = fb.attribute(s, end); !ok {
			return 0, false
		}
		raw = raw && tight
	}
	if len(fb.attrs) > lim.MaxAttrs || len(fb.decls) > lim.MaxNSDeclsPerElement {
		return 0, false
	}
	if fb.decl += len(fb.decls); fb.decl > lim.MaxNSDecls {
		return 0, false
	}
	o := fastOpen{qs: int32(q + 1), qn: int32(len(qn)), pn: int32(len(prefix)), scope: int32(len(fb.scope)), rendered: int32(len(fb.rend)), known: true}
	parent := &fb.open[len(fb.open)-1]
	// inherited: same prefix as the parent and no declaration here, so
	// the same namespace, already in effect in the output (the parent's
	// start tag made it so): most elements of a payload.
	inherited := len(fb.decls) == 0 && parent.known && bytes.Equal(parent.prefix(data), prefix)
	var space []byte
	if inherited {
		space = fb.spaces[parent.space]
	} else {
		fb.scope = append(fb.scope, fb.decls...)
		var ok bool
		if space, ok = fb.lookup(prefix); !ok || reservedNS(string(space)) || (fb.ctx.plain != notPlain && isSOAP(string(space))) {
			return 0, false
		}
	}
	if inherited {
		o.space, o.kind = parent.space, parent.kind
	} else {
		fb.kinds++
		o.space, o.kind = int32(len(fb.spaces)), fb.kinds
		fb.spaces = append(fb.spaces, space)
	}
	if fb.elementOnly(space, local) {
		return 0, false
	}
	var ok bool
	// Resolve the attributes and refuse what genericContent refuses and
	// what the gate refuses (two attributes with one expanded name).
	for k := range fb.attrs {
		a := &fb.attrs[k]
		if len(a.prefix) > 0 {
			if a.space, ok = fb.lookup(a.prefix); !ok {
				return 0, false
			}
		}
		if string(a.local) == "Id" || string(a.local) == "ID" || (string(a.local) == "id" && string(a.space) == xmlscan.NamespaceXML) ||
			reservedNS(string(a.space)) {
			return 0, false
		}
		for j := range k {
			if b := &fb.attrs[j]; bytes.Equal(a.local, b.local) && bytes.Equal(a.space, b.space) {
				return 0, false
			}
		}
	}
	// exc-c14n §3: the namespace nodes visibly utilized, and the listed
	// prefixes this element declares, unless already in effect.
	fb.cand = fb.cand[:0]
	if !inherited {
		fb.consider(prefix, space)
	}
	for k := range fb.attrs {
		if a := &fb.attrs[k]; len(a.prefix) > 0 {
			fb.consider(a.prefix, a.space)
		}
	}
	if fb.ctx.listed {
		for _, d := range fb.decls {
			if fb.inList(d.prefix) {
				fb.consider(d.prefix, d.uri)
			}
		}
	}
	sorted := attrsSorted(fb.attrs)
	if raw && sorted && len(fb.cand) == 0 && len(fb.decls) == 0 && attrsPlain(fb.attrs) {
		// The canonical start tag is the input's: nothing to emit.
		if empty {
			fb.sync(p - 2)
			fb.out = append(append(append(fb.out, "></"...), qn...), '>')
			fb.mark = p
			fb.flush()
		} else {
			fb.open = append(fb.open, o)
		}
		return p, true
	}
	sortNS(fb.cand)
	if !sorted {
		if len(fb.attrs) == 2 {
			fb.attrs[0], fb.attrs[1] = fb.attrs[1], fb.attrs[0]
		} else {
			sortAttrs(fb.attrs)
		}
	}
	fb.sync(q)
	out := append(fb.out, '<')
	out = append(out, qn...)
	for _, b := range fb.cand {
		if len(b.prefix) == 0 {
			out = append(out, ` xmlns="`...)
		} else {
			out = append(out, " xmlns:"...)
			out = append(out, b.prefix...)
			out = append(out, `="`...)
		}
		out = append(out, b.uri...) // no byte of it needs escaping (attribute)
		out = append(out, '"')
		fb.rend = append(fb.rend, b)
	}
	for k := range fb.attrs {
		a := &fb.attrs[k]
		out = append(out, ' ')
		out = append(out, a.qname...)
		out = append(out, `="`...)
		out = fb.attrValue(out, a)
		out = append(out, '"')
	}
	out = append(out, '>')
	fb.out = out
	if empty {
		fb.out = append(append(append(fb.out, "</"...), qn...), '>')
		fb.scope, fb.rend = fb.scope[:o.scope], fb.rend[:o.rendered]
	} else {
		fb.open = append(fb.open, o)
	}
	fb.mark = p
	fb.flush()
	return p, true
}

func (fb *fastBody) inList(prefix []byte) bool {
	for _, p := range fb.ctx.prefixes {
		if p == string(prefix) {
			return true
		}
	}
	return false
}

func (fb *fastBody) elementOnly(space, local []byte) bool {
	if fb.onlyLens&(1<<min(len(local), 63)) == 0 {
		return false
	}
	for _, n := range fb.only {
		if n.Local == string(local) && n.Space == string(space) {
			return true
		}
	}
	return false
}

// attribute scans name S? '=' S? quoted-value at p; tight: written
// name="value".
func (fb *fastBody) attribute(p, end int) (next int, tight, ok bool) {
	data, lim := fb.data, fb.lim
	ne, colon := name(data, p, end)
	if ne == p || ne-p > lim.MaxNameLen {
		return 0, false, false
	}
	a := fastAttr{qname: data[p:ne]}
	if colon >= 0 {
		a.prefix, a.local = data[p:colon], data[colon+1:ne]
	} else {
		a.local = a.qname
	}
	s := skipS(data, ne, end)
	if s >= end || data[s] != '=' {
		return 0, false, false
	}
	s = skipS(data, s+1, end)
	if s >= end || (data[s] != '"' && data[s] != '\'') {
		return 0, false, false
	}
	quote := data[s]
	vs := s + 1
	ve := vs + bytes.IndexByte(data[vs:end], quote)
	if ve < vs || ve-vs > lim.MaxAttrValueLen {
		return 0, false, false
	}
	a.value = data[vs:ve]
	// From stopAttr byte to stopAttr byte (fastbody_scan.go).
	for i := fb.nextAttr(vs); i < ve; i = fb.nextAttr(i) {
		switch c := data[i]; {
		case c == '<':
			return 0, false, false
		case c == '&':
			_, n := charRef(data[i:ve])
			if n == 0 {
				return 0, false, false
			}
			i += n
		case c >= 0x80:
			r, n := utf8.DecodeRune(data[i:ve])
			if r == utf8.RuneError || !xmlChar(r) {
				return 0, false, false
			}
			i += n
			continue
		case c == '\t' || c == '\n' || c == '"':
			// '\r' is not: line-end normalization comes first, and
			// "\r\n" is one space.
			i++
		default:
			return 0, false, false
		}
		a.norm = true
	}
	switch {
	case string(a.qname) == "xmlns" || string(a.prefix) == "xmlns":
		// A namespace declaration: plain absolute URIs only (no
		// normalization, no relative URI c14n would refuse), no
		// xml/xmlns binding, no undeclaring a prefix, no duplicate.
		if a.norm || (len(a.prefix) > 0 && len(a.value) == 0) || (len(a.value) > 0 && relativeURI(a.value)) ||
			(len(a.prefix) > 0 && (string(a.local) == "xml" || string(a.local) == "xmlns")) ||
			string(a.value) == xmlscan.NamespaceXML || string(a.value) == xmlscan.NamespaceXMLNS || !plainURI(a.value) {
			return 0, false, false
		}
		d := nsb{uri: a.value}
		if len(a.prefix) > 0 {
			d.prefix = a.local
		}
		for _, o := range fb.decls {
			if bytes.Equal(o.prefix, d.prefix) {
				return 0, false, false
			}
		}
		fb.decls = append(fb.decls, d)
	default:
		fb.attrs = append(fb.attrs, a)
	}
	return ve + 1, s == ne+1 && quote == '"', true
}

// plainURI: no byte of it is escaped in a canonical attribute value, and
// no white space (the gate refuses it in a namespace name).
func plainURI(v []byte) bool {
	for _, c := range v {
		if c <= 0x20 || c >= 0x80 || c == '&' || c == '<' || c == '"' {
			return false
		}
	}
	return true
}

// relativeURI is c14n's test for a relative namespace URI (which makes
// canonicalization fail): no scheme.
func relativeURI(uri []byte) bool {
	for k, c := range uri {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case k > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		case k > 0 && c == ':':
			return false
		default:
			return true
		}
	}
	return true
}

// attrValue appends an attribute value normalized (XML 1.0 §3.3.3, CDATA
// type: references replaced, each white space character a space) and
// escaped (C14N 1.0 §2.3, c14n.AppendAttr).
func (fb *fastBody) attrValue(out []byte, a *fastAttr) []byte {
	if !a.norm {
		return append(out, a.value...)
	}
	v := a.value
	run := 0 // v[run:i] is copied as c14n escapes it
	for i := 0; i < len(v); {
		switch v[i] {
		case '&':
			out = c14n.AppendAttr(out, v[run:i])
			r, n := charRef(v[i:])
			out = appendAttrRune(out, r)
			i += n
			run = i
		case '\t', '\n', '\r':
			out = append(c14n.AppendAttr(out, v[run:i]), ' ')
			i++
			run = i
		default:
			i++
		}
	}
	return c14n.AppendAttr(out, v[run:])
}

// endTag handles the end tag at q.
func (fb *fastBody) endTag(q, end int) (int, bool) {
	data := fb.data
	if len(fb.open) < 2 {
		return 0, false // closes the Body or beyond: not content
	}
	o := &fb.open[len(fb.open)-1]
	p := q + 2
	n := p + int(o.qn)
	if n > end || !eqAt(data, p, int(o.qs), int(o.qn)) {
		return 0, false
	}
	p = n
	if p < end && data[p] != '>' {
		p = skipS(data, n, end)
	}
	if p >= end || data[p] != '>' {
		return 0, false
	}
	if p > n {
		// White space before '>': the canonical end tag has none.
		fb.rec.on = false
		fb.sync(q)
		fb.out = append(append(append(fb.out, "</"...), o.qname(data)...), '>')
		fb.mark = p + 1
		fb.flush()
	}
	if int(o.scope) != len(fb.scope) || int(o.rendered) != len(fb.rend) {
		fb.scope, fb.rend = fb.scope[:o.scope], fb.rend[:o.rendered]
	}
	fb.open = fb.open[:len(fb.open)-1]
	if fb.rec.on {
		fb.recEnd(p + 1)
	}
	return p + 1, true
}

// sortNS orders namespace nodes by prefix, the default first (C14N 1.0
// §2.2).
func sortNS(b []nsb) {
	for x := 1; x < len(b); x++ {
		for y := x; y > 0 && bytes.Compare(b[y].prefix, b[y-1].prefix) < 0; y-- {
			b[y], b[y-1] = b[y-1], b[y]
		}
	}
}

// sortAttrs orders attributes by namespace URI, then local name,
// unqualified ones first (C14N 1.0 §2.2).
func sortAttrs(a []fastAttr) {
	less := func(x, y *fastAttr) bool {
		if c := bytes.Compare(x.space, y.space); c != 0 {
			return c < 0
		}
		return bytes.Compare(x.local, y.local) < 0
	}
	for x := 1; x < len(a); x++ {
		for y := x; y > 0 && less(&a[y], &a[y-1]); y-- {
			a[y], a[y-1] = a[y-1], a[y]
		}
	}
}

// attrsSorted reports whether the attributes are in canonical order.
func attrsSorted(a []fastAttr) bool {
	for k := 1; k < len(a); k++ {
		if c := bytes.Compare(a[k-1].space, a[k].space); c > 0 || c == 0 && bytes.Compare(a[k-1].local, a[k].local) > 0 {
			return false
		}
	}
	return true
}

// attrsPlain reports whether no attribute value needs normalization or
// escaping.
func attrsPlain(a []fastAttr) bool {
	for k := range a {
		if a[k].norm {
			return false
		}
	}
	return true
}
