package template

// The sibling kernel (issue 14): the replay of fastbody_replay.go run
// over as many consecutive siblings as match in one call, without going
// back to the walk between them. At 1 MiB of a markup-dense list the
// walk's replay cost about 92 ns a sibling of ~76 bytes, twice the
// SHA-256 of the same bytes; the kernel is a compare, a scan and a copy
// per part. The record is compiled (sibKern) into its fixed segments,
// padded to 32-byte chunks and compared 32 bytes at a time, its variable
// parts (each ends at its first stop byte, fastbody_scan.go's classes,
// which the next fixed segment must begin with), and the canonical
// output as a list of pieces of the input (positions of the sibling's
// start and end and of its parts, plus constants): the input as it is,
// but each unsorted start tag's attributes in the recorded canonical
// order. sibRunGeneric is the definition; sibRunAVX2 (amd64) computes
// the same results, checked by TestSibKernDifferential and
// FuzzSibKern.
//
// Every read and write stays in bounds by construction: a 32-byte load
// at p needs p+32 <= len(data), a part's bytes are classified in
// 64-byte blocks of data's offsets that are whole in data, and a sibling
// is only taken when its end is at least 32 bytes before the end of data
// (the piece copies read up to 31 bytes past a piece) and its output
// fits in the buffer with 32 bytes of slack. The siblings the kernel leaves (near the end of data,
// or a mismatch) are for the replay loop, which decides with the same
// rules.

const (
	kernAttr = iota // the part is an attribute value: it ends at a stopAttr byte
	kernText        // character data: it ends at a stopText byte
	kernEnd         // no part: the last segment
)

// kernSeg is a fixed segment and the part after it. Its layout is
// known to fastbody_kern_amd64.s.
type kernSeg struct {
	off  int32  // the fixed bytes are fix[off:off+32*full+remn], fix padded
	full int32  // whole 32-byte chunks
	rem  uint32 // mask of the last chunk's bytes, 0: none
	remn int32  // the last chunk's length
	kind int32  // kernAttr, kernText, kernEnd
	pos  int32  // byte offset in pos of the part's start (its end is next)
}

// kernPiece is the output piece data[pos[ra]+oa : pos[rb]+ob]; pos[0]
// is the sibling's start, pos[1] its end, pos[2+2i] and pos[3+2i] part
// i's start and end. Layout known to fastbody_kern_amd64.s.
type kernPiece struct{ ra, oa, rb, ob int32 }

// sibKern is a sibling record compiled for the kernel.
type sibKern struct {
	segs   []kernSeg
	fix    []byte
	pieces []kernPiece // none: the output is the input as it is
	pos    []int
}

// sibArgs are the kernel's arguments and results, in one block whose
// layout fastbody_kern_amd64.s knows (TestSibArgsLayout).
type sibArgs struct {
	data    *byte
	dlen    int
	end     int // content end: a part must end before it, a sibling at it
	q       int // in: the first sibling's start; out: the end of the last taken
	out     *byte
	oo      int // in/out: the output offset
	ocap    int
	max     int // siblings at most
	sibs    int // out: siblings taken
	maxAttr int
	maxText int // the text of one sibling, all parts together
	segs    *kernSeg
	fix     *byte
	pieces  *kernPiece
	npiece  int
	pos     *int
	masks   [2]uint64 // scratch: the stop masks of a block, by part kind
}

// compileKern builds the kernel program of s (s.prog compiled).
func (s *sibRec) compileKern(data []byte) {
	k := &s.prog.kern
	p := &s.prog
	k.segs, k.fix, k.pieces = k.segs[:0], k.fix[:0], k.pieces[:0]
	for i := range p.segs {
		g := &p.segs[i]
		fn := int(g.fn)
		ks := kernSeg{off: int32(len(k.fix)), full: int32(fn / 32), remn: int32(fn % 32), pos: int32(8 * (2 + 2*i))}
		ks.rem = uint32(uint64(1)<<(fn%32) - 1)
		switch g.kind {
		case evAttr:
			ks.kind = kernAttr
		case evText:
			ks.kind = kernText
		default:
			ks.kind = kernEnd
		}
		k.fix = append(k.fix, data[g.fs:int(g.fs)+fn]...)
		for len(k.fix)%32 != 0 {
			k.fix = append(k.fix, 0)
		}
		k.segs = append(k.segs, ks)
	}
	k.fix = append(k.fix, make([]byte, 32)...) // a full chunk to load at any off
	if len(p.tags) > 0 {
		start := func(i int) int32 { return int32(2 + 2*i) }
		end := func(i int) int32 { return int32(3 + 2*i) }
		prev := kernPiece{ra: 0} // from the sibling's start
		for ti := range p.tags {
			t := &p.tags[ti]
			first, n := int(t.first), int(t.n)
			prev.rb, prev.ob = start(first), -t.back[0]
			k.pieces = append(k.pieces, prev)
			for j := range n {
				x := int(t.perm[j]) & (simpleAttrs - 1)
				k.pieces = append(k.pieces, kernPiece{ra: start(first + x), oa: -t.back[x], rb: end(first + x), ob: 1})
			}
			prev = kernPiece{ra: end(first + n - 1), oa: 1}
		}
		prev.rb, prev.ob = 1, 0 // to the sibling's end
		k.pieces = append(k.pieces, prev)
	}
	if need := 2 + 2*len(k.segs); cap(k.pos) < need {
		k.pos = make([]int, need)
	}
	k.pos = k.pos[:2+2*len(k.segs)]
}

// runGeneric is the kernel's definition (and its code where there is no
// AVX2).
func (k *sibKern) runGeneric(data []byte, q, end int, out []byte, oo, max, maxAttr, maxText int, emit bool) (sibs, in, o int) {
	pos := k.pos
	dlen := len(data)
	o = oo
	for sibs < max {
		cur, text := q, 0
		for i := range k.segs {
			g := &k.segs[i]
			f := int(g.off)
			for range g.full {
				if cur+32 > dlen || string(data[cur:cur+32]) != string(k.fix[f:f+32]) {
					return sibs, q, o
				}
				cur, f = cur+32, f+32
			}
			if g.rem != 0 {
				n := int(g.remn)
				if cur+32 > dlen || string(data[cur:cur+n]) != string(k.fix[f:f+n]) {
					return sibs, q, o
				}
				cur += n
			}
			if g.kind == kernEnd {
				break
			}
			class := uint8(stopAttr)
			if g.kind == kernText {
				class = stopText
			}
			// The first stop at or after cur, each byte looked at in a
			// 64-byte block (of data's offsets) that is whole in data.
			start := cur
			for {
				if cur&^63+64 > dlen || cur >= end {
					return sibs, q, o
				}
				if stopClass[data[cur]]&class != 0 {
					break
				}
				cur++
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
		if cur > end || text > maxText || cur+32 > dlen {
			return sibs, q, o
		}
		if emit && len(k.pieces) > 0 {
			if o+(cur-q)+32 > len(out) {
				return sibs, q, o
			}
			pos[0], pos[1] = q, cur
			for _, p := range k.pieces {
				a, b := pos[p.ra]+int(p.oa), pos[p.rb]+int(p.ob)
				if b > a {
					o += copy(out[o:], data[a:b])
				}
			}
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
// the input is the output, left for sync.
func (fb *fastBody) replayKern(s *sibRec, q int) int {
	k := &s.prog.kern
	lim := fb.lim
	max := (lim.MaxElements - fb.elems) / int(s.elems)
	if max <= 0 || len(k.segs) == 0 {
		return 0
	}
	emit := len(k.pieces) > 0 && fb.h != nil
	if emit {
		fb.sync(q)
		if cap(fb.out) < kernRoom {
			fb.out = append(make([]byte, 0, kernRoom), fb.out...)
		}
	}
	done := 0
	for {
		var out []byte
		if emit {
			out = fb.out[:cap(fb.out)]
		}
		n, in, o := k.run(fb.data, q, fb.end, out, len(fb.out), max, lim.MaxAttrValueLen, lim.MaxTextLen, emit)
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
			return done
		}
		fb.out, fb.mark = out[:o], in
		// Full enough to have stopped for room: hash it and go on.
		again := len(fb.out) >= fastFlush && max > 0
		fb.flush()
		if !again {
			return done
		}
	}
}
