package template

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

// Sibling replay (issue 14): a payload's lists repeat one subtree with
// other values (<Item sku=".." qty=".."><Note>..</Note></Item> a
// thousand times). The walk records, for the last subtrees at a depth
// (sibAlts of them) made only of simple tags (simpleTag: no namespace
// declared or rendered, no empty-element tag, end tags without white
// space), where their variable parts are: attribute values and runs of
// character data. The next start tag at that depth, under a parent of
// the same kind, is first compared with a recorded subtree: its fixed
// bytes (names, attribute names, punctuation, end tags) must equal the
// recorded ones, and each variable part must end at the byte the
// recorded one ended at ('"' for a value, '<' for text). A value must
// hold no stop byte (fastbody_scan.go), so that it is canonical as it
// is; a text's stop bytes other than '<' (a reference, '>', non-ASCII)
// are checked as the walk checks them (textPart) and the text written
// escaped (escText). Such a subtree is the recorded one with other
// values: the tag-by-tag walk would make the same decisions on it (the
// same names, prefixes, namespace, order and checks) and the same
// output up to the values, so it is accepted and emitted at once: the
// input as it is, except each unsorted start tag's attributes in the
// recorded canonical order and the escaped texts. The limits that
// depend on the values are checked here (value and text lengths, the
// latter for all the subtree's text together, which is stricter than per
// element); the element count is added. Anything else falls back to the
// walk.
//
// The cost of a replayed sibling is meant to be close to a compare
// (issue 14): a record that repeated once is compiled (sibProg) into
// its fixed segments held as words (until then its first sibling is
// compared with the record's own bytes: plan), the siblings that follow
// one another are taken in one loop, and a reordered start tag is the
// input copied once with its attributes written over it.

const (
	evAttr = iota // an attribute value: data[s:e], e the closing quote
	evText        // character data: data[s:e], e a '<'
	evTag         // an unsorted start tag: its name ends at s, its n attributes are the n events before it
)

// maxSibEvents bounds a recording: a longer subtree is not a list item,
// and giving up frees the recording for the lists inside it.
const maxSibEvents = 64

// sibEvent is a variable part of a recorded subtree, or a start tag to
// reorder.
type sibEvent struct {
	kind uint8
	n    uint8 // evTag: attributes
	perm [simpleAttrs]uint8
	s, e int32
	as   int32 // evAttr: the attribute's name start
}

// sibRec is the recorded subtree at a depth: data[start:end] under a
// parent of kind (0: none).
type sibRec struct {
	kind       int32
	start, end int32
	elems      int32
	evs        []sibEvent
	prog       sibProg // compiled at the first replay
}

// recorder is the subtree being recorded (one at a time, the outermost);
// the subtrees inside it that close while it records are recorded too,
// as the part of its events since their start tag (marks).
type recorder struct {
	on    bool
	depth int
	start int
	elems int32
	epoch int32 // recordings started
	evs   []sibEvent
	marks []recMark // by depth: the last simple start tag while recording
	sibs  []sibRec  // by depth, sibAlts each: sibs[d*sibAlts+j]
	alts  []sibAlt  // by depth
	parts []sibSpan // replay: the new subtree's variable parts

	replayed int // subtrees replayed (tests)
}

// sibAlts is how many records a depth keeps: a list whose items have
// optional elements repeats a few shapes, not one (issue 14's mix: an
// order line with or without a description, a discount), and the fields
// of an item each repeat the same field of the item before. A sibling is
// compared with the one that replayed last first, then the others; a
// new record takes the oldest slot but that one.
const sibAlts = 4

// sibAlt is a depth's use of its records: the slot the next record
// takes, the one that replayed last and the one recorded last.
type sibAlt struct{ next, hit, last uint8 }

// slot is the record the element ending at depth d makes.
func (r *recorder) slot(d int) *sibRec {
	for len(r.sibs) < (d+1)*sibAlts {
		r.sibs = append(r.sibs, sibRec{})
	}
	for len(r.alts) <= d {
		r.alts = append(r.alts, sibAlt{})
	}
	a := &r.alts[d]
	j := a.next
	if j == a.hit && r.sibs[d*sibAlts+int(j)].kind != 0 {
		j = (j + 1) % sibAlts
	}
	a.next, a.last = (j+1)%sibAlts, j
	return &r.sibs[d*sibAlts+int(j)]
}

// latest is the record made last at depth d, or nil.
func (r *recorder) latest(d int) *sibRec {
	if d >= len(r.alts) {
		return nil
	}
	if s := &r.sibs[d*sibAlts+int(r.alts[d].last)]; s.kind != 0 {
		return s
	}
	return nil
}

// recMark is where a start tag's subtree begins in the recording.
type recMark struct {
	epoch, ev, pos, elems int32
}

func (r *recorder) reset() {
	r.on, r.replayed = false, 0
	for i := range r.sibs {
		r.sibs[i].kind, r.sibs[i].prog.ok = 0, false
	}
	clear(r.alts)
}

// recTag is called for each start tag simpleTag took at q, at depth
// len(fb.open): it starts a recording unless one is on, marks where the
// tag's subtree begins and records its values (and its order when
// unsorted). An empty-element tag ends the recording: its canonical form
// is not its bytes.
func (fb *fastBody) recTag(q int, at *[simpleAttrs][3]int32, n int, sorted bool, perm *[simpleAttrs]uint8, empty bool) {
	r := &fb.rec
	if !r.on {
		r.on, r.depth, r.start, r.elems, r.evs = true, len(fb.open), q, 0, r.evs[:0]
		r.epoch++
	}
	d := len(fb.open)
	for len(r.marks) <= d {
		r.marks = append(r.marks, recMark{})
	}
	r.marks[d] = recMark{epoch: r.epoch, ev: int32(len(r.evs)), pos: int32(q), elems: r.elems}
	r.elems++
	if empty || len(r.evs)+n+1 > maxSibEvents {
		r.on = false
		return
	}
	for k := range n {
		r.evs = append(r.evs, sibEvent{kind: evAttr, s: at[k][2], e: at[k][1], as: at[k][0]})
	}
	if !sorted {
		r.evs = append(r.evs, sibEvent{kind: evTag, n: uint8(n), perm: *perm, s: int32(q + 1)})
	}
}

// recText records the canonical character data data[s:e] (e a '<').
func (fb *fastBody) recText(s, e int) {
	r := &fb.rec
	if len(r.evs) == maxSibEvents {
		r.on = false
		return
	}
	r.evs = append(r.evs, sibEvent{kind: evText, s: int32(s), e: int32(e)})
}

// recEnd is called when the element at depth len(fb.open) has ended at
// end: if it is the recorded one, its record is the depth's.
func (fb *fastBody) recEnd(end int) {
	r := &fb.rec
	d := len(fb.open)
	if d == r.depth {
		r.on = false
		s := r.slot(d)
		s.kind, s.start, s.end, s.elems = fb.open[d-1].kind, int32(r.start), int32(end), r.elems
		s.evs, r.evs = r.evs, s.evs[:0]
		s.prog.ok = false
		return
	}
	// An element inside the recorded one (a nested list's item): its
	// start tag's mark is of this recording, the elements since opened
	// and closed (a replayed one adds its parts).
	if d > r.depth && d < len(r.marks) && r.marks[d].epoch == r.epoch {
		m := r.marks[d]
		s := r.slot(d)
		s.kind, s.start, s.end, s.elems = fb.open[d-1].kind, m.pos, int32(end), r.elems-m.elems
		s.evs = append(s.evs[:0], r.evs[m.ev:]...)
		s.prog.ok = false
	}
}

// sibProg is a record compiled for replay: the fixed bytes between its
// variable parts, the first 32 of each held as words so that a sibling's
// are compared in two loads (four past 16 bytes, the rest against the
// record past 32), and the start tags to reorder.
type sibProg struct {
	ok bool
	// kernOK: kern is compiled, at the kernel's first use (kernel).
	kernOK bool
	segs   []sibSeg // one per variable part, then the fixed bytes after the last
	// fixed is the record's fixed segments one after the other, its
	// own copy (the segments' fs are offsets into it): a record learnt
	// from one message is compared with another's bytes, never read
	// from the old buffer (fastbody_memo.go).
	fixed []byte
	tags  []sibTag
	kern  sibKern // the same for the kernel (fastbody_kern.go)
}

// sibSeg is the fixed bytes fixed[fs:fs+fn] of the record, then a variable
// part of kind (evAttr, evText) or none (evTag: the last segment).
type sibSeg struct {
	w, m   [4]uint64 // the first 32 fixed bytes as words, and masks of them
	fs, fn int32
	kind   uint8
	ev     int32 // the variable part's event in evs
}

// sibTag is an unsorted start tag of the record: its attributes are the
// variable parts first..first+n-1, written in perm's order; back[k] is
// how far attribute k's value starts after the space before its name.
type sibTag struct {
	first, n uint8
	perm     [simpleAttrs]uint8
	back     [simpleAttrs]int32
}

// head is the length of the record's first fixed segment (its bytes
// up to its first variable part): where a sibling of another name
// differs.
func (s *sibRec) head() int {
	for i := range s.evs {
		if e := &s.evs[i]; e.kind != evTag {
			return int(e.s - s.start)
		}
	}
	return int(s.end - s.start)
}

// plan builds s.prog's segments and start tags from s.evs, with each
// segment's fixed bytes left where they were recorded (fs: data[fs:
// fs+fn], the message the record is from) and no words: enough to check
// one sibling against the record, with nothing copied.
func (s *sibRec) plan() {
	p := &s.prog
	p.segs, p.tags = p.segs[:0], p.tags[:0]
	pos := s.start
	parts := 0
	for i := range s.evs {
		e := &s.evs[i]
		if e.kind == evTag {
			t := sibTag{first: uint8(parts - int(e.n)), n: e.n, perm: e.perm}
			for k := range int(e.n) {
				a := &s.evs[i-int(e.n)+k]
				t.back[k] = a.s - a.as + 1
			}
			p.tags = append(p.tags, t)
			continue
		}
		p.segs = append(p.segs, sibSeg{fs: pos, fn: e.s - pos, kind: e.kind, ev: int32(i)})
		pos = e.e
		parts++
	}
	p.segs = append(p.segs, sibSeg{fs: pos, fn: s.end - pos, kind: evTag, ev: -1})
}

// compile builds s.prog from s.evs and the recorded bytes data[s.start:
// s.end]: the plan, its fixed segments copied into fixed (fs becomes an
// offset there) with their first 32 bytes as words, and the kernel's
// program. Only the fixed segments are copied: the record's values and
// text, which may be most of its bytes, are never read again.
func (s *sibRec) compile(data []byte) {
	s.plan()
	p := &s.prog
	p.fixed = p.fixed[:0]
	for i := range p.segs {
		g := &p.segs[i]
		src := data[g.fs : g.fs+g.fn]
		g.fs = int32(len(p.fixed))
		p.fixed = append(p.fixed, src...)
		for j := 0; j < 4 && 8*j < len(src); j++ {
			if w := src[8*j:]; len(w) >= 8 {
				g.w[j], g.m[j] = binary.LittleEndian.Uint64(w), ^uint64(0)
			} else {
				for k, c := range w {
					g.w[j] |= uint64(c) << (8 * k)
					g.m[j] |= 0xff << (8 * k)
				}
			}
		}
	}
	p.kern.segs, p.kernOK = p.kern.segs[:0], false
	p.ok = true
}

// kernel compiles s's kernel program unless it is: at its first use, as
// a record taken only while a recording is on (its siblings' parts
// recorded by the loop) never runs the kernel; on the mix compileKern
// was most of a compile.
func (s *sibRec) kernel() {
	if !s.prog.kernOK {
		s.compileKern()
		s.prog.kernOK = true
	}
}

// replayRec takes the start tag at q and its whole subtree when it
// repeats one of the records at its depth, and the siblings right after
// it that repeat that one too; it returns the end of the last, or 0
// (nothing done: the walk goes on tag by tag).
func (fb *fastBody) replayRec(q int) int {
	r := &fb.rec
	d := len(fb.open)
	if d >= len(r.alts) {
		return 0
	}
	kind := fb.open[d-1].kind
	a := &r.alts[d]
	for k := range sibAlts {
		j := (int(a.hit) + k) % sibAlts
		if s := &r.sibs[d*sibAlts+j]; s.kind != 0 && s.kind == kind {
			if p := fb.replayOne(s, q); p != 0 {
				a.hit = uint8(j)
				return p
			}
		}
	}
	return 0
}

// replayOne is replayRec with the record s.
func (fb *fastBody) replayOne(s *sibRec, q int) int {
	r := &fb.rec
	data, end, lim := fb.data, fb.end, fb.lim
	// words: the record is compiled. A record is compiled only once a
	// sibling repeated it: the fields of an operation or of a list item
	// are recorded one after the other and each differs from the next
	// at its name (head), and in a list whose items have optional
	// elements and escaped text most items differ from the one before
	// (issue 14's mix: compiling every record was half of the pass).
	// Until then the first sibling is checked against the record's own
	// bytes in this message (plan).
	words := s.prog.ok
	if !words {
		if n := s.head(); q+n > end || string(data[q:q+n]) != string(data[s.start:int(s.start)+n]) {
			return 0
		}
		s.plan()
	}
	done := 0 // the end of the last subtree taken
	if words && !r.on {
		// Not recording (which needs each sibling's parts): the kernel
		// takes the siblings it can, the loop below the rest.
		s.kernel()
		if done = fb.replayKern(s, q); done != 0 {
			if q = done; q+1 >= end || data[q] != '<' {
				return done
			}
		}
	}
	segs, fixed := s.prog.segs, s.prog.fixed
	if !words {
		fixed = data // the plan's segments are where they were recorded
	}
	nv := len(segs) - 1
	if cap(r.parts) < nv {
		r.parts = make([]sibSpan, nv)
	}
	parts := r.parts[:nv]
	// The stop masks' window, held here: next moves it.
	lo, wlen, win := fb.lo, fb.wlen, fb.win
	for fb.elems+int(s.elems) <= lim.MaxElements {
		cur := q // the new subtree's bytes before cur are matched
		text := 0
		var dirty uint64 // the text parts to write escaped (by part)
		stops := false   // a text part held a stop byte: not the kernel's
		for i := range segs {
			g := &segs[i]
			// The fixed bytes: the first 32 against the words (16 in
			// most segments), the rest against the record.
			fn := int(g.fn)
			if words && cur+32 <= len(data) {
				x := (binary.LittleEndian.Uint64(data[cur:])^g.w[0])&g.m[0] | (binary.LittleEndian.Uint64(data[cur+8:])^g.w[1])&g.m[1]
				if fn > 16 {
					x |= (binary.LittleEndian.Uint64(data[cur+16:])^g.w[2])&g.m[2] | (binary.LittleEndian.Uint64(data[cur+24:])^g.w[3])&g.m[3]
				}
				if x != 0 || fn > 32 && (cur+fn > len(data) || string(data[cur+32:cur+fn]) != string(fixed[g.fs+32:int(g.fs)+fn])) {
					return done
				}
			} else if cur+fn > len(data) || string(data[cur:cur+fn]) != string(fixed[g.fs:int(g.fs)+fn]) {
				return done
			}
			cur += fn
			if g.kind == evTag {
				break
			}
			// The variable part runs to the first stop byte, which the
			// next fixed bytes must begin at ('"' or '<'): no stop
			// inside it, so it is canonical as it is.
			which := 0
			if g.kind == evAttr {
				which = scanWin
			}
			// Its block's mask, else the next block's (a part
			// crossing a block edge), else next.
			ce := -1
			if k := uint(cur - lo); k < uint(wlen) {
				if m := win[which+int(k>>6&(scanWin-1))] >> (k & 63); m != 0 {
					ce = cur + bits.TrailingZeros64(m)
				} else if k2 := k | 63 + 1; k2 < uint(wlen) {
					if m := win[which+int(k2>>6&(scanWin-1))]; m != 0 {
						ce = lo + int(k2) + bits.TrailingZeros64(m)
					}
				}
			}
			if ce < 0 {
				ce = fb.next(cur, which)
				lo, wlen, win = fb.lo, fb.wlen, fb.win
			}
			if g.kind == evText && ce < end && data[ce] != '<' {
				// Text with a reference, a '>' or non-ASCII (most
				// list items of the realistic mix have some): checked
				// as the walk checks it, written escaped once the
				// subtree is accepted (non-ASCII as it is).
				var esc bool
				if ce, esc = fb.textPart(cur, ce); ce < 0 {
					return done
				}
				if stops = true; esc {
					dirty |= 1 << uint(i&63)
				}
				lo, wlen, win = fb.lo, fb.wlen, fb.win
			}
			if ce >= end {
				return done
			}
			if g.kind == evAttr {
				if ce-cur > lim.MaxAttrValueLen {
					return done
				}
			} else {
				text += ce - cur
			}
			parts[i] = sibSpan{int32(cur), int32(ce)}
			cur = ce
		}
		if cur > end || text > lim.MaxTextLen {
			return done
		}
		// Accepted: the input as it is but the unsorted start tags.
		fb.elems += int(s.elems)
		r.replayed++
		if r.on {
			fb.recReplayed(s, parts)
		}
		if dirty == 0 {
			for t := range s.prog.tags {
				fb.reorder(&s.prog.tags[t], parts)
			}
		} else {
			fb.emitDirty(s.prog.tags, parts, dirty)
		}
		fb.flush()
		done, q = cur, cur
		if !words {
			// The record repeats: compiled for the siblings after
			// this one (the kernel's too), from the top.
			s.compile(data)
			if q+1 < end && data[q] == '<' {
				if p := fb.replayOne(s, q); p != 0 {
					return p
				}
			}
			return done
		}
		if q+1 >= end || data[q] != '<' {
			return done
		}
		if stops && !r.on {
			// Back to the kernel for the siblings after this one.
			s.kernel()
			if p := fb.replayKern(s, q); p != 0 {
				if done, q = p, p; q+1 >= end || data[q] != '<' {
					return done
				}
			}
		}
	}
	return done
}

// textPart checks the character data of a replayed sibling's text part
// from ts, at its stop byte i (not '<'), as textStop does, and returns
// where the part ends (its '<' or end), or -1: not handled; esc: it
// holds a reference or a '>', and its canonical form is not its bytes
// (non-ASCII is copied as it is).
func (fb *fastBody) textPart(ts, i int) (_ int, esc bool) {
	data, end := fb.data, fb.end
	for i < end && data[i] != '<' {
		switch c := data[i]; {
		case c == '>':
			if i >= ts+2 && data[i-1] == ']' && data[i-2] == ']' {
				return -1, false // "]]>" in text: not well-formed
			}
			i, esc = i+1, true
		case c == '&':
			_, n := charRef(data[i:end])
			if n == 0 {
				return -1, false
			}
			i, esc = i+n, true
		case c >= 0x80:
			for i < end && data[i] >= 0x80 {
				r, n := utf8.DecodeRune(data[i:end])
				if r == utf8.RuneError || !xmlChar(r) {
					return -1, false
				}
				i += n
			}
		default:
			return -1, false // control characters, CR
		}
		if i < end {
			i = fb.next(i, 0)
		}
	}
	return i, esc
}

// emitDirty writes an accepted sibling's unsorted start tags and its
// text parts that need escaping (dirty, by part) in document order: a
// tag before the text parts after its attributes.
func (fb *fastBody) emitDirty(tags []sibTag, parts []sibSpan, dirty uint64) {
	t := 0
	for dirty != 0 {
		j := bits.TrailingZeros64(dirty)
		dirty &= dirty - 1
		for t < len(tags) && int(tags[t].first) < j {
			fb.reorder(&tags[t], parts)
			t++
		}
		fb.escText(int(parts[j].s), int(parts[j].e))
	}
	for ; t < len(tags); t++ {
		fb.reorder(&tags[t], parts)
	}
}

// escText writes the text data[s:e], which textPart checked, in its
// canonical form (C14N 1.0 §2.3: references replaced, '&', '<', '>'
// escaped).
func (fb *fastBody) escText(s, e int) {
	if fb.h == nil {
		fb.mark = e // check only
		return
	}
	fb.sync(s)
	data, out := fb.data, fb.out
	run := s
	for i := s; i < e; {
		switch data[i] {
		case '&':
			r, n := charRef(data[i:e])
			out = appendTextRune(append(out, data[run:i]...), r)
			i += n
			run = i
		case '>':
			out = append(append(out, data[run:i]...), "&gt;"...)
			i++
			run = i
		default:
			i++
		}
	}
	fb.out, fb.mark = append(out, data[run:e]...), e
}

// sibSpan is a variable part of a replayed subtree: data[s:e].
type sibSpan struct{ s, e int32 }

// reorder writes the start tag t of a replayed subtree: up to its name
// as it is (the name ends at the first attribute's space), then each
// attribute with the space before it in canonical order, then '>'.
func (fb *fastBody) reorder(t *sibTag, parts []sibSpan) {
	data := fb.data
	first, n := int(t.first), int(t.n)
	if first+n > len(parts) {
		return // never: compile made them so
	}
	a0 := int(parts[first].s) - int(t.back[0])
	te := int(parts[first+n-1].e) + 1 // the '>'
	if fb.h == nil {
		fb.mark = te + 1 // check only
		return
	}
	if a0-fb.mark >= fastFlush {
		fb.syncLong(a0)
	}
	out := fb.out
	o := len(out)
	need := te + 1 - fb.mark // the output is as long as the input
	if cap(out)-o < need+8 {
		out = append(out, make([]byte, need+8)...)[:o]
	}
	buf := out[:cap(out)]
	if te+8 > len(data) {
		// Too close to the end of data for the word copies.
		o += copy(buf[o:], data[fb.mark:a0])
		for k := range n {
			x := int(t.perm[k]) & (simpleAttrs - 1)
			p := parts[first+x]
			o += copy(buf[o:], data[int(p.s)-int(t.back[x]):p.e+1])
		}
	} else {
		// The input up to the end of the tag in one copy, then the
		// attributes over it in their order: the output is as long.
		copy(buf[o:], data[fb.mark:te])
		o += a0 - fb.mark
		for k := range n {
			x := int(t.perm[k]) & (simpleAttrs - 1)
			p := parts[first+x]
			o = put(buf, o, data, int(p.s)-int(t.back[x]), int(p.e)+1)
		}
	}
	buf[o] = '>'
	fb.out, fb.mark = buf[:o+1], te+1
}

// put copies src[s:e] to dst[o:] and returns o+e-s: short pieces (most)
// a word at a time, writing up to 7 bytes past them in dst and reading up
// to 7 past them in src (the callers leave room).
func put(dst []byte, o int, src []byte, s, e int) int {
	if e-s > 64 {
		return o + copy(dst[o:], src[s:e])
	}
	for ; s < e; s, o = s+8, o+8 {
		binary.LittleEndian.PutUint64(dst[o:], binary.LittleEndian.Uint64(src[s:]))
	}
	return o - (s - e)
}

// recReplayed adds the parts of a replayed subtree to the recording
// around it.
func (fb *fastBody) recReplayed(s *sibRec, parts []sibSpan) {
	r := &fb.rec
	if len(r.evs)+len(s.evs) > maxSibEvents {
		r.on = false
		return
	}
	r.elems += s.elems
	j := 0
	for i := range s.evs {
		e := s.evs[i]
		if e.kind != evTag {
			e.as += parts[j].s - e.s
			e.s, e.e = parts[j].s, parts[j].e
			j++
		}
		r.evs = append(r.evs, e)
	}
}
