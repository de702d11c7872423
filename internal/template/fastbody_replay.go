package template

import "encoding/binary"

// Sibling replay (issue 14): a payload's lists repeat one subtree with
// other values (<Item sku=".." qty=".."><Note>..</Note></Item> a
// thousand times). The walk records, for the last subtree at a depth made
// only of simple tags (simpleTag: no namespace declared or rendered, no
// empty-element tag, end tags without white space), where its variable
// parts are: attribute values and runs of character data. The next start
// tag at that depth, under a parent of the same kind, is first compared
// with the recorded subtree: its fixed bytes (names, attribute names,
// punctuation, end tags) must equal the recorded ones, and each variable
// part must end at the byte the recorded one ended at ('"' for a value,
// '<' for text) with no stop byte before it (fastbody_scan.go), so that
// it is canonical as it is. Such a subtree is the recorded one with other
// plain values: the tag-by-tag walk would make the same decisions on it
// (the same names, prefixes, namespace, order and checks) and the same
// output up to the values, so it is accepted and emitted at once: the
// input as it is, except each unsorted start tag's attributes in the
// recorded canonical order. The limits that depend on the values are
// checked here (value and text lengths, the latter for all the subtree's
// text together, which is stricter than per element); the element count
// is added. Anything else falls back to the walk.

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
	sibs  []sibRec  // by depth
	delta []int32   // replay: per event, the offset of the new subtree's part from the recorded one's
	ends  []int32   // replay: per event, where the new part ends

	replayed int // subtrees replayed (tests)
}

// recMark is where a start tag's subtree begins in the recording.
type recMark struct {
	epoch, ev, pos, elems int32
}

func (r *recorder) reset() {
	r.on, r.replayed = false, 0
	for i := range r.sibs {
		r.sibs[i].kind = 0
	}
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
	for len(r.sibs) <= d {
		r.sibs = append(r.sibs, sibRec{})
	}
	s := &r.sibs[d]
	if d == r.depth {
		r.on = false
		s.kind, s.start, s.end, s.elems = fb.open[d-1].kind, int32(r.start), int32(end), r.elems
		s.evs, r.evs = r.evs, s.evs[:0]
		return
	}
	// An element inside the recorded one (a nested list's item): its
	// start tag's mark is of this recording, the elements since opened
	// and closed (a replayed one adds its parts).
	if d > r.depth && d < len(r.marks) && r.marks[d].epoch == r.epoch {
		m := r.marks[d]
		s.kind, s.start, s.end, s.elems = fb.open[d-1].kind, m.pos, int32(end), r.elems-m.elems
		s.evs = append(s.evs[:0], r.evs[m.ev:]...)
	}
}

// sameAt reports whether data[i:i+n] equals data[j:j+n], word by word.
func sameAt(data []byte, i, j, n int) bool {
	for n >= 8 {
		if binary.LittleEndian.Uint64(data[i:]) != binary.LittleEndian.Uint64(data[j:]) {
			return false
		}
		i, j, n = i+8, j+8, n-8
	}
	if n == 0 {
		return true
	}
	return eqAt(data, i, j, n)
}

// replay takes the start tag at q and its whole subtree when it repeats
// the one recorded at its depth; it returns the end of the subtree, or 0
// (nothing done: the walk goes on tag by tag).
func (fb *fastBody) replay(q int) int {
	r := &fb.rec
	d := len(fb.open)
	if d >= len(r.sibs) {
		return 0
	}
	s := &r.sibs[d]
	if s.kind == 0 || s.kind != fb.open[d-1].kind {
		return 0
	}
	data, end, lim := fb.data, fb.end, fb.lim
	if fb.elems+int(s.elems) > lim.MaxElements {
		return 0
	}
	if cap(r.delta) < len(s.evs) {
		r.delta, r.ends = make([]int32, len(s.evs)), make([]int32, len(s.evs))
	}
	delta, ends := r.delta[:len(s.evs)], r.ends[:len(s.evs)]
	dl := q - int(s.start) // the new subtree's offset from the recorded one's
	pos := int(s.start)    // recorded bytes before pos are matched
	text := 0
	for i := range s.evs {
		e := &s.evs[i]
		if e.kind == evTag {
			continue
		}
		// The fixed bytes up to the part.
		vs := int(e.s)
		if vs+dl > end || !sameAt(data, pos+dl, pos, vs-pos) {
			return 0
		}
		cs := vs + dl
		which := 0
		if e.kind == evAttr {
			which = scanWin
		}
		ce, ok := fb.peek(cs, which)
		if !ok {
			ce = fb.next(cs, which)
		}
		if ce >= end {
			return 0
		}
		if e.kind == evAttr {
			if data[ce] != '"' || ce-cs > lim.MaxAttrValueLen {
				return 0
			}
		} else {
			if data[ce] != '<' {
				return 0
			}
			text += ce - cs
		}
		delta[i], ends[i] = int32(dl), int32(ce)
		pos, dl = int(e.e), ce-int(e.e)
	}
	if n := int(s.end) - pos; pos+dl+n > end || !sameAt(data, pos+dl, pos, n) || text > lim.MaxTextLen {
		return 0
	}
	// Accepted: the input as it is but the unsorted start tags.
	fb.elems += int(s.elems)
	r.replayed++
	if r.on {
		// The recording around it takes its parts.
		if len(r.evs)+len(s.evs) > maxSibEvents {
			r.on = false
		} else {
			r.elems += s.elems
			for i := range s.evs {
				e := s.evs[i]
				if e.kind != evTag {
					e.s, e.e, e.as = e.s+delta[i], ends[i], e.as+delta[i]
				}
				r.evs = append(r.evs, e)
			}
		}
	}
	for i := range s.evs {
		e := &s.evs[i]
		if e.kind != evTag {
			continue
		}
		n := int(e.n)
		first := i - n
		// Up to the name as it is (it ends at the first attribute's
		// space), then each attribute with the space before it.
		a0 := &s.evs[first]
		fb.sync(int(a0.as) - 1 + int(delta[first]))
		out := fb.out
		for k := range n {
			j := first + int(e.perm[k])
			a := &s.evs[j]
			out = append(out, data[int(a.as)-1+int(delta[j]):ends[j]+1]...)
		}
		fb.out = append(out, '>')
		fb.mark = int(ends[i-1]) + 2
		fb.flush()
	}
	return int(s.end) + dl
}
