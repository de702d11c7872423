package template

// The sibling kernel (issue 14): the replay of fastbody_replay.go run
// over as many consecutive siblings as match in one call, without going
// back to the walk between them. At 1 MiB of a markup-dense list the
// walk's replay cost about 92 ns a sibling of ~76 bytes, twice the
// SHA-256 of the same bytes; the kernel is a compare, a scan and a copy
// per part. The record is compiled (sibKern) into its fixed segments,
// padded to 32-byte chunks and compared 32 bytes at a time, its variable
// parts (each ends at its first stop byte, fastbody_scan.go's classes,
// which the next fixed segment must begin with), and how to write the
// canonical form (kernOp): the input as it is, but each unsorted start
// tag's attributes in the recorded canonical order. runGeneric is the
// definition; sibRunAVX2 (amd64) computes the same results, checked by
// TestSibKernDifferential and FuzzSibKern.
//
// Every read and write stays in bounds by construction. The kernel
// works before lim = min(end, len(data)-128): a sibling starts before
// it, a fixed chunk (a segment's tail, or a whole 32-byte chunk of a
// long one, kernChunk) is compared only when it starts before it, a part
// ends before it and a sibling ends at it at the latest. So a 32-byte
// load at a sibling's start, a part's end or a fixed segment's tail
// (both less than 32 bytes after one of those) is in data, and so are
// the 64-byte blocks the AVX2 kernel classifies (that of a position
// before lim+32, or the next one of a block the search went through
// before lim), and the reads up to 31 bytes past a sibling's end of the
// 32-byte copies. The output has 32 bytes of slack. The siblings the
// kernel leaves (the last ones before the end of data, or a mismatch)
// are for the replay loop, which decides with the same rules.

const (
	kernAttr  = iota // the part is an attribute value: it ends at a stopAttr byte
	kernText         // character data: it ends at a stopText byte
	kernEnd          // no part: the last segment
	kernChunk        // no part: 32 fixed bytes of a longer segment, whose rest follows
)

// kernSlack is how far before the end of data the kernel stops.
const kernSlack = 128

// kernSeg is up to 32 fixed bytes and the part after them: a fixed
// segment of the record is its whole 32-byte chunks (kernChunk each),
// then its tail. The bytes are held in the descriptor, so that the
// kernel walks one array (issue 14: forming a pointer into a separate
// one, and looping over a segment's chunks, were 5 of the ~40
// instructions a segment took). Its layout is known to fastbody_amd64.s
// (TestSibArgsLayout).
type kernSeg struct {
	fix  [32]byte // the remn fixed bytes, padded with zeros
	mask [32]byte // 0xff for each of them
	remn int64    // 0 to 32 (64 bits: the kernel adds it from memory)
	kind int32    // kernAttr, kernText, kernEnd, kernChunk
	pos  int32    // byte offset in pos of the part's start (its end is next)
}

// kernOp is a step of a sibling's canonical form, which starts as a copy
// of its input; x is pos[p/8]+c, pos holding each part's start and end
// (kernSeg.pos). Layout known to fastbody_amd64.s.
type kernOp struct {
	kind int32 // opSeek, opAttr, opRepair, opEnd
	p, c int32
	_    int32
}

const (
	opSeek   = iota // the output goes on at the sibling's offset x: a tag's first attribute
	opAttr          // copy the attribute data[x:pos[p/8+1]+1] (space, name, value, quote)
	opRepair        // the tag's end is at x: the 32-byte copies wrote past it, write the input back there
	opEnd
)

// sibKern is a sibling record compiled for the kernel.
type sibKern struct {
	segs []kernSeg
	ops  []kernOp // none: the output is the input as it is
	pos  []int
	// swap: the ops are those of one start tag whose two attributes the
	// canonical form swaps (opSeek, opAttr, opAttr, opRepair, opEnd);
	// the AVX2 kernel runs them straight from sw (each op's p and c)
	// without the op loop's dispatch (issue 14: the bench payload's
	// siblings).
	swap bool
	sw   [8]int
}

// sibArgs are the kernel's arguments and results, in one block whose
// layout fastbody_amd64.s knows (TestSibArgsLayout).
type sibArgs struct {
	data    *byte
	end     int // lim (see above): a part must end before it, a sibling at it
	q       int // in: the first sibling's start; out: the end of the last taken
	out     *byte
	oo      int // in/out: the output offset
	ocap    int
	max     int // siblings at most
	sibs    int // out: siblings taken
	maxAttr int
	maxText int // the text of one sibling, all parts together
	segs    *kernSeg
	_       uintptr
	ops     *kernOp // nil: no output
	pos     *int
	masks   [2]uint64 // scratch: the stop masks of a block, by part kind
	// Hashing as it goes (kernHash): the state (nil: none), the base
	// of the canonical form (out when emitting, else data), the offset
	// of the block being hashed and the end of those counted; the
	// sibling's text so far (scratch: the kernel keeps the quarters of
	// the blocks counted not yet run in a register in its place); the
	// state before the block.
	hs    *[8]uint32
	hbase *byte
	hp    int
	hend  int
	text  int
	_     int
	hsave [4]uint64
	sw    *[8]int // sibKern.sw when swap, else nil
}

// kernHash is the fast body's digest handed to the kernel (amd64, SHA-NI:
// shaNI): the kernel hashes the whole 64-byte blocks of the canonical
// form from hp on as soon as it has them, inside its loop, so that the
// core overlaps SHA-256's serial rounds with the kernel's own work, and
// returns hp past the last block it hashed; the caller hashes the rest
// (a block or two it had not finished when it stopped: it does not
// drain its queue of blocks at the end, and a block it was in the middle
// of is undone).
// The digest must have no bytes buffered (shaNI.nx == 0) and its length
// is the caller's to count. runGeneric hashes nothing.
type kernHash struct {
	s  *[8]uint32
	hp int // an offset in out when emitting, else in data
}

// kernMasks[n] is the mask of a chunk of n bytes: 0xff for each of
// them, then zeros. compileKern copies it whole: appending its 32 bytes
// one at a time was ~5 % of the fast body's instructions on the
// realistic mix (BenchmarkFastBodyMix, issue 14).
var kernMasks = func() (m [33][32]byte) {
	for n := range m {
		for j := range n {
			m[n][j] = 0xff
		}
	}
	return m
}()

// compileKern builds the kernel program of s (s.prog compiled).
func (s *sibRec) compileKern() {
	k := &s.prog.kern
	p := &s.prog
	k.segs, k.ops = k.segs[:0], k.ops[:0]
	for i := range p.segs {
		g := &p.segs[i]
		fix := p.fixed[g.fs : int(g.fs)+int(g.fn)]
		for len(fix) >= 32 {
			ks := kernSeg{mask: kernMasks[32], remn: 32, kind: kernChunk}
			copy(ks.fix[:], fix)
			k.segs, fix = append(k.segs, ks), fix[32:]
		}
		ks := kernSeg{mask: kernMasks[len(fix)], remn: int64(len(fix)), pos: int32(8 * 2 * i)}
		copy(ks.fix[:], fix)
		switch g.kind {
		case evAttr:
			ks.kind = kernAttr
		case evText:
			ks.kind = kernText
		default:
			ks.kind = kernEnd
		}
		k.segs = append(k.segs, ks)
	}
	for ti := range p.tags {
		t := &p.tags[ti]
		first, n := int(t.first), int(t.n)
		start := func(i int) int32 { return int32(8 * 2 * i) }
		k.ops = append(k.ops, kernOp{kind: opSeek, p: start(first), c: -t.back[0]})
		for j := range n {
			x := int(t.perm[j]) & (simpleAttrs - 1)
			k.ops = append(k.ops, kernOp{kind: opAttr, p: start(first + x), c: -t.back[x]})
		}
		k.ops = append(k.ops, kernOp{kind: opRepair, p: start(first+n-1) + 8, c: 1})
	}
	if len(k.ops) > 0 {
		k.ops = append(k.ops, kernOp{kind: opEnd})
	}
	o := k.ops
	k.swap = len(o) == 5 && o[0].kind == opSeek && o[1].kind == opAttr && o[2].kind == opAttr && o[3].kind == opRepair
	if k.swap {
		for i := range 4 {
			k.sw[2*i], k.sw[2*i+1] = int(o[i].p), int(o[i].c)
		}
	}
	k.sizePos()
}

// sizePos gives k.pos room for each segment's part (kernSeg.pos).
func (k *sibKern) sizePos() {
	if need := 2 * len(k.segs); cap(k.pos) < need {
		k.pos = make([]int, need)
	}
	k.pos = k.pos[:2*len(k.segs)]
}

// runGeneric is the kernel's definition (and its code where there is no
// AVX2): it takes the siblings at data[q:] that repeat the record, at
// most max, and writes their canonical form to out[oo:] (out's length is
// its room) when emit and k has ops; it returns how many, where the last
// ends and the output offset after it.
func (k *sibKern) runGeneric(data []byte, q, end int, out []byte, oo, max, maxAttr, maxText int, emit bool) (sibs, in, o int) {
	pos := k.pos
	lim := min(end, len(data)-kernSlack)
	o = oo
	for sibs < max {
		cur, text := q, 0
		for i := range k.segs {
			g := &k.segs[i]
			n := int(g.remn)
			if cur >= lim || string(data[cur:cur+n]) != string(g.fix[:n]) {
				return sibs, q, o
			}
			cur += n
			if g.kind == kernEnd {
				break
			}
			if g.kind == kernChunk {
				continue
			}
			class := uint8(stopAttr)
			if g.kind == kernText {
				class = stopText
			}
			start := cur // the part: to the first stop at or after cur
			for cur < lim && stopClass[data[cur]]&class == 0 {
				cur++
			}
			if cur >= lim {
				return sibs, q, o
			}
			if g.kind == kernAttr {
				if cur-start > maxAttr {
					return sibs, q, o
				}
			} else {
				text += cur - start
			}
			pos[g.pos/8], pos[g.pos/8+1] = start, cur
		}
		if cur > lim || text > maxText {
			return sibs, q, o
		}
		if emit && len(k.ops) > 0 {
			if o+(cur-q)+32 > len(out) {
				return sibs, q, o
			}
			copy(out[o:], data[q:cur])
			w := 0 // the output's offset in the sibling
			for _, op := range k.ops {
				x := pos[op.p/8] + int(op.c)
				switch op.kind {
				case opSeek:
					w = x - q
				case opAttr:
					w += copy(out[o+w:], data[x:pos[op.p/8+1]+1])
				}
			}
			o += cur - q
		}
		sibs, q = sibs+1, cur
	}
	return sibs, q, o
}

// kernRoom is the output buffer the kernel is given: a flush's worth
// and as much again, so that it stops for room about once a flush.
const kernRoom = 2*fastFlush + 4096

// replayKern takes with the kernel the siblings at q that repeat s, and
// returns the end of the last, or 0. The output (when the record has
// start tags to reorder) goes to fb.out, hashed a flush at a time; else
// the input is the output, left for sync. With fb.sha (SHA-NI), the
// kernel hashes the canonical form as it goes (kernHash): the output's
// whole blocks, or the input's.
func (fb *fastBody) replayKern(s *sibRec, q int) int {
	k := &s.prog.kern
	lim := fb.lim
	max := (lim.MaxElements - fb.elems) / int(s.elems)
	if max <= 0 || len(k.segs) == 0 {
		return 0
	}
	emit := len(k.ops) > 0 && fb.h != nil
	d := fb.sha
	if emit {
		fb.sync(q)
		if cap(fb.out) < kernRoom {
			fb.out = append(make([]byte, 0, kernRoom), fb.out...)
		}
		if d != nil {
			// The output from a block's start: what the digest holds
			// of one goes back in front of it.
			fb.spill()
			fb.out = append(fb.out, d.x[:d.nx]...)
			d.n -= uint64(d.nx)
			d.nx = 0
		}
	}
	done := 0
	for {
		var out []byte
		if emit {
			out = fb.out[:cap(fb.out)]
		}
		var kh *kernHash
		n := max
		if d != nil {
			kh = &fb.kh
			if !emit {
				n = fb.alignInput(q, max)
			}
			kh.s, kh.hp = &d.s, fb.mark
			if emit {
				kh.hp = 0
			} else if d.nx != 0 {
				kh = nil // a sibling first, unhashed (alignInput)
			}
		}
		if kh != nil && kh.hp > q {
			// Never so (the mark trails q), but the kernel counts the
			// blocks to hash as (end - hp) rounded down: a mark past q
			// would underflow it. The walk takes the siblings instead.
			return done
		}
		n, in, o := k.run(fb.data, q, fb.end, out, len(fb.out), n, lim.MaxAttrValueLen, lim.MaxTextLen, emit, kh)
		if n == 0 {
			return done
		}
		fb.elems += n * int(s.elems)
		fb.rec.replayed += n
		max -= n
		done, q = in, in
		if !emit {
			if fb.h == nil {
				fb.mark = in // check only
			}
			if kh != nil {
				d.n += uint64(kh.hp - fb.mark)
				fb.mark = kh.hp
			}
			if d != nil && kh == nil && max > 0 {
				continue // aligned now: the rest hashed as it goes
			}
			return done
		}
		// Full enough to have stopped for room: hash it and go on.
		again := o >= fastFlush && max > 0
		fb.mark = in
		if kh != nil {
			// The kernel hashed out[:kh.hp]; the rest (less than a
			// block) to the front.
			d.n += uint64(kh.hp)
			fb.out = out[:copy(out, out[kh.hp:o])]
		} else {
			fb.out = out[:o]
			fb.flush()
		}
		if !again {
			return done
		}
	}
}

// alignInput readies fb.sha for the kernel to hash the input from mark
// on, and returns how many siblings the kernel may take: all (max), or,
// when the input before q is too short to fill the digest's buffered
// block (it must be empty), one, to be hashed with what follows.
func (fb *fastBody) alignInput(q, max int) int {
	d := fb.sha
	fb.spill()
	if d.nx == 0 {
		return max
	}
	if k := shaChunk - d.nx; q-fb.mark >= k {
		d.Write(fb.data[fb.mark : fb.mark+k])
		fb.mark += k
		return max
	}
	return 1
}
