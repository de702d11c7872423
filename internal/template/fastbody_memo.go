package template

import (
	"slices"
	"unsafe"

	"github.com/wssgw/wssgw/internal/xmlscan"
)

// The per-template memo of the fast body (issue 14). A callgrind account
// of a 4 KiB hit found ~7,500 instructions a message spent on what is the
// same for every message of one template: the Body's first start tag
// (<m:Order xmlns:m="...">, through startTag), the first list item walked
// tag by tag and recorded, and its sibling program compiled. The memo
// keeps them, learnt from a message the fast pass accepted, on the
// template's fastCtx, and a later message uses them only where its bytes
// equal them:
//
//   - The first start tag: its bytes, its canonical form and what it
//     adds to the state. startTag's decisions depend only on the tag's
//     bytes and on the state at the first element of the Body, which is
//     the fastCtx's (scope, rendered, counts), the Limits and the
//     ElementOnly names, all held in the memo or compared with it. So a
//     message whose first start tag is byte for byte the memo's gets the
//     same decisions and output.
//   - The record of the list items under that element (depth 2, parent
//     kind 1): installed (a copy) before the element's first child, so
//     that the first item is replayed as the others, the replay comparing
//     every fixed byte against the record's own copy of them and checking
//     each variable part as it does for any sibling. The namespace context
//     of the record (in-scope and rendered bindings, parent's prefix,
//     namespace and kind, depth) is the one the memo's first tag makes, so
//     the record applies only under an element the memo opened.
//
// A published memo is never written: runs copy out of it (sibRec.copyFrom)
// and a new one replaces it whole (atomic.Pointer on fastCtx).
//
// One template covers every operation of a partner stack (a dozen on the
// realistic mix, testtraffic), each with its own first start tag: a
// single memo fitted one operation and the mix got 0.18 memo hits a
// message. So a template holds a small set of memos, one per first tag
// (byte for byte), at most memoSet: the published head and its next
// list, all learnt under the same Limits and names, each used exactly as
// a lone memo is.

// fastMemo is what one accepted message taught about its template.
type fastMemo struct {
	lim   xmlscan.Limits
	only  []xmlscan.Name
	tag   []byte // the first start tag, '<' to '>'
	canon []byte // its canonical form
	scope []nsb  // the bindings it declares
	rend  []nsb  // those its canonical form renders
	space []byte // its namespace
	decls int    // namespace declarations on it
	qn    int32  // its name's length
	pn    int32  // its prefix's length
	rec   sibRec // the record under it (kind 0: none)
	// deep are records at depths below 2 whose parent is of the memo
	// tag's kind (1): see memoDeep.
	deep []memoRec
	// next is the set's next memo (another first tag), published
	// with this one and never written either.
	next *fastMemo
}

// memoRec is a record of a memo and its depth.
type memoRec struct {
	depth int
	rec   sibRec
}

// memoDeep bounds the deeper records a memo keeps. On the realistic mix
// the lists are at depth 3 (<Lines><Line>..</Line>..</Lines> under the
// operation's element), each message's first item walked, recorded and
// compiled again without them. A record of kind 1 (its parent's kind:
// every element from the memo's first tag down to that parent inherited
// its prefix and namespace, nothing declared) is installed before the
// walk goes below the first tag, where nothing is recorded yet: it is
// then used as a record of an earlier sibling of this message under
// another parent of that kind would be (replayRec: the same depth, the
// same kind, every fixed byte compared with its own copy). Only records
// that replayed in the teacher (compiled) are kept: they repeat.
const memoDeep = 4

// memoSet bounds the memos a template holds, one per first tag, and
// memoSetBytes their size together (memoBytes): a memo outlives the
// runs, outside the store's byte budget, so a template's set stays under
// 24 KiB whatever its senders' operations are (the realistic mix's
// dozen operations leave 14-20 KiB a template: TestFastBodyMemoMixSize):
// a store full of templates (templates.maxTemplates, 1,000 by default)
// adds at most 24 MiB, of the order the single memo's 12 KiB did.
// A stack with more operations than fit gets the memos of its most
// recent first tags (memoEnd's policy).
const (
	memoSet      = 16
	memoSetBytes = 24 << 10
)

// memoBytes is about what m holds: its tag, canonical form and records.
func memoBytes(m *fastMemo) int {
	n := len(m.tag) + len(m.canon) + len(m.space) + recBytes(&m.rec)
	for _, b := range m.scope {
		n += len(b.prefix) + len(b.uri)
	}
	for _, b := range m.rend {
		n += len(b.prefix) + len(b.uri)
	}
	for i := range m.deep {
		n += recBytes(&m.deep[i].rec)
	}
	return n
}

// recBytes is about what the compiled record s holds.
func recBytes(s *sibRec) int {
	p := &s.prog
	return cap(s.evs)*int(unsafe.Sizeof(sibEvent{})) + cap(p.segs)*int(unsafe.Sizeof(sibSeg{})) +
		cap(p.tags)*int(unsafe.Sizeof(sibTag{})) + cap(p.fixed) + cap(p.kern.segs)*int(unsafe.Sizeof(kernSeg{})) +
		cap(p.kern.ops)*int(unsafe.Sizeof(kernOp{})) + cap(p.kern.pos)*8
}

// memoRepublish: a template whose messages do not match its memo gets
// the memo of one accepted message in this many misses (a bound on the
// allocations a varying first item costs).
const memoRepublish = 64

// memoMaxRecord bounds the first tag and the record a memo keeps (the
// record's bytes, text included): a memo lives as long as its template,
// outside the pooled runs and the store's byte budget, so what it holds
// must not follow the sizes a sender chose. With the compiled record
// (at most maxSibEvents parts, each segment's words and masks) a memo
// stays under about 12 KiB, bounded by templates.maxTemplates; a first
// tag or a list item of a few hundred bytes is the case it is for.
const memoMaxRecord = 1024

// memoState is a run's use of the memo.
type memoState struct {
	m         *fastMemo // the template's set, when the limits and names are this run's
	e         *fastMemo // the memo of this run's first start tag (hit)
	hit       bool      // the first start tag was a memo's
	installed bool      // the record was offered to the first child
	used      bool      // and it replayed that child
	// The first start tag as this run's startTag took it (q < 0: none),
	// kept for a memo: its canonical form and the bindings it added.
	q, p   int
	canon  []byte
	scope  []nsb
	rend   []nsb
	qn, pn int32
	spills int // fastBody.spills before it
}

// memoStart loads the template's memo for a run.
func (fb *fastBody) memoStart() {
	ms := &fb.memo
	ms.m, ms.e, ms.hit, ms.installed, ms.used, ms.q = nil, nil, false, false, false, -1
	if m := fb.ctx.memo.Load(); m != nil && m.lim == *fb.lim && slices.Equal(m.only, fb.only) {
		ms.m = m
	}
}

// firstTag reports whether the start tag the walk is at is the Body's
// first element: the state is the fastCtx's.
func (fb *fastBody) firstTag() bool {
	return fb.kinds == 0 && len(fb.open) == 1 && fb.elems == fb.ctx.elements
}

// memoTag takes the Body's first start tag at q when it is a memo's,
// byte for byte, and returns its end (0: not taken).
func (fb *fastBody) memoTag(q int) int {
	m := fb.memo.m
	for ; m != nil; m = m.next {
		if n := len(m.tag); q+n <= fb.end && string(fb.data[q:q+n]) == string(m.tag) {
			break
		}
	}
	if m == nil {
		return 0
	}
	n := len(m.tag)
	lim := fb.lim
	// The same checks as startTag's, on the same counts: they passed.
	if fb.elems+1 > lim.MaxElements || fb.ctx.depth+1 > lim.MaxDepth || fb.decl+m.decls > lim.MaxNSDecls {
		return 0
	}
	fb.elems++
	fb.tops++
	fb.decl += m.decls
	fb.kinds = 1
	fb.open = append(fb.open, fastOpen{
		space: int32(len(fb.spaces)), qs: int32(q + 1), qn: m.qn, pn: m.pn,
		scope: int32(len(fb.scope)), rendered: int32(len(fb.rend)), kind: 1, known: true,
	})
	fb.scope = append(fb.scope, m.scope...)
	fb.rend = append(fb.rend, m.rend...)
	fb.spaces = append(fb.spaces, m.space)
	fb.rec.on = false
	fb.sync(q)
	fb.out = append(fb.out, m.canon...)
	fb.mark = q + n
	fb.flush()
	fb.memo.e, fb.memo.hit, fb.memo.q, fb.memo.p = m, true, q, q+n
	for i := range m.deep {
		d := &m.deep[i]
		fb.rec.slot(d.depth).copyFrom(&d.rec)
	}
	return q + n
}

// memoSeen keeps what startTag did with the Body's first start tag
// data[q:p], its output beginning at out (before it) and mark0 (mark
// before it): the canonical form and the bindings, copied, for a memo.
func (fb *fastBody) memoSeen(q, p, out0, mark0 int) {
	ms := &fb.memo
	if fb.h == nil || len(fb.open) != 2 || fb.spills != ms.spills || p-q > memoMaxRecord {
		return // check only, an empty element, or the output hashed
	}
	o := &fb.open[1]
	if fb.mark == p {
		at := out0 + q - mark0
		if at > len(fb.out) {
			return
		}
		ms.canon = append(ms.canon[:0], fb.out[at:]...)
	} else {
		ms.canon = append(ms.canon[:0], fb.data[q:p]...)
	}
	ms.scope = append(ms.scope[:0], fb.scope[o.scope:]...)
	ms.rend = append(ms.rend[:0], fb.rend[o.rendered:]...)
	ms.q, ms.p, ms.qn, ms.pn = q, p, o.qn, o.pn
}

// replay is replayRec, but at the first child of the element the memo
// opened, whose namespace context is the memo's record's, it first
// installs a copy of that record (when nothing is recorded there).
func (fb *fastBody) replay(q int) int {
	ms := &fb.memo
	if !ms.hit || ms.installed || len(fb.open) != 2 {
		return fb.replayRec(q)
	}
	ms.installed = true
	r := &fb.rec
	if m := ms.e; m.rec.kind == 1 && r.latest(2) == nil && fb.open[1].kind == 1 {
		r.slot(2).copyFrom(&m.rec)
	}
	p := fb.replayRec(q)
	ms.used = p != 0
	return p
}

// memoEnd publishes, after an accepted run, this run's memo when the
// template has none for its first tag and fewer than memoSet, or in
// memoRepublish runs that missed it (a record not used, or a first tag
// not in a full set: it replaces the least recent). The set is
// published whole: the new memo at its head, the others copied (their
// contents shared, read only), the one it replaces left out.
func (fb *fastBody) memoEnd() {
	ms := &fb.memo
	if ms.q < 0 {
		return
	}
	cur := fb.ctx.memo.Load()
	switch {
	case cur == nil:
	case cur.lim == *fb.lim && slices.Equal(cur.only, fb.only):
		s := fb.rec.latest(2)
		// A miss: a record newMemo would keep that the memo did not
		// give, or deep records the memo lacks (it was learnt from a
		// message whose lists did not repeat).
		hasRec := s != nil && s.kind == 1 && s.prog.ok
		if ms.hit && (ms.used || !hasRec) && (len(ms.e.deep) > 0 || !fb.deepKept()) {
			return
		}
		if (ms.hit || memoLen(cur) >= memoSet) && fb.ctx.misses.Add(1)%memoRepublish != 0 {
			return
		}
	default: // learnt under other limits or names: replaced whole, as seldom
		if fb.ctx.misses.Add(1)%memoRepublish != 0 {
			return
		}
		cur = nil
	}
	m := fb.newMemo()
	tail := &m.next
	size := memoBytes(m)
	for c, n := cur, 1; c != nil && n < memoSet; c = c.next {
		if string(c.tag) == string(m.tag) {
			continue
		}
		if size += memoBytes(c); size > memoSetBytes {
			break
		}
		cp := *c
		cp.next = nil
		*tail = &cp
		tail = &cp.next
		n++
	}
	fb.ctx.memo.Store(m)
}

// deepKept reports whether this run has a record newMemo keeps in deep.
func (fb *fastBody) deepKept() bool {
	r := &fb.rec
	for d := 3; d < len(r.alts); d++ {
		for j := range sibAlts {
			if s := &r.sibs[d*sibAlts+j]; s.kind == 1 && s.prog.ok && s.end-s.start <= memoMaxRecord {
				return true
			}
		}
	}
	return false
}

// memoLen is how many memos the set m holds.
func memoLen(m *fastMemo) int {
	n := 0
	for ; m != nil; m = m.next {
		n++
	}
	return n
}

// newMemo is a memo of this run's first start tag and the record under
// it, all copied.
func (fb *fastBody) newMemo() *fastMemo {
	ms := &fb.memo
	data := fb.data
	m := &fastMemo{lim: *fb.lim, only: slices.Clone(fb.only), tag: slices.Clone(data[ms.q:ms.p])}
	canon, scope, rend := ms.canon, ms.scope, ms.rend
	m.qn, m.pn = ms.qn, ms.pn
	if ms.hit {
		// The first tag was the memo's: its parts (read only).
		canon, scope, rend = ms.e.canon, ms.e.scope, ms.e.rend
		m.qn, m.pn = ms.e.qn, ms.e.pn
	}
	m.canon = slices.Clone(canon)
	for _, b := range scope {
		m.scope = append(m.scope, nsb{slices.Clone(b.prefix), slices.Clone(b.uri)})
		m.decls++
	}
	for _, b := range rend {
		m.rend = append(m.rend, nsb{slices.Clone(b.prefix), slices.Clone(b.uri)})
	}
	m.space = slices.Clone(fb.spaces[0])
	if s := fb.rec.latest(2); s != nil {
		// Only a record that replayed here (compiled): one that did not
		// repeat in its own message seldom fits the next one's first
		// child, and each message pays its copy (on the mix, the last
		// field of an operation, copied in 2,857 of 3,000 messages).
		if s.kind == 1 && s.prog.ok && s.end-s.start <= memoMaxRecord {
			s.kernel()
			m.rec.copyFrom(s)
		}
	}
	r := &fb.rec
	for d := 3; d < len(r.alts) && len(m.deep) < memoDeep; d++ {
		for j := range sibAlts {
			s := &r.sibs[d*sibAlts+j]
			if s.kind != 1 || !s.prog.ok || s.end-s.start > memoMaxRecord || len(m.deep) == memoDeep {
				continue
			}
			s.kernel()
			m.deep = append(m.deep, memoRec{depth: d})
			m.deep[len(m.deep)-1].rec.copyFrom(s)
		}
	}
	return m
}

// copyFrom makes s a copy of the compiled record m, in s's own buffers.
func (s *sibRec) copyFrom(m *sibRec) {
	s.kind, s.start, s.end, s.elems = m.kind, m.start, m.end, m.elems
	s.evs = append(s.evs[:0], m.evs...)
	p, mp := &s.prog, &m.prog
	p.segs = append(p.segs[:0], mp.segs...)
	p.tags = append(p.tags[:0], mp.tags...)
	p.fixed = append(p.fixed[:0], mp.fixed...)
	k, mk := &p.kern, &mp.kern
	k.segs = append(k.segs[:0], mk.segs...)
	k.ops = append(k.ops[:0], mk.ops...)
	k.swap, k.sw = mk.swap, mk.sw
	k.sizePos()
	p.ok, p.kernOK = true, mp.kernOK
}
