package template

import (
	"github.com/segmentio/asm/cpu"
	"github.com/segmentio/asm/cpu/x86"
)

var haveAVX2 = cpu.X86.Has(x86.AVX2)

// scanBlocksAVX2 is scanBlocksGeneric for blocks 64-byte blocks at src
// (fastbody_amd64.s).
//
//go:noescape
func scanBlocksAVX2(src *byte, blocks int, t, a *uint64)

// scanBlocks is scanBlocksGeneric, with AVX2 where the CPU has it.
func scanBlocks(src []byte, t, a []uint64) {
	if !haveAVX2 || len(t) == 0 {
		scanBlocksGeneric(src, t, a)
		return
	}
	_ = src[len(t)*64-1]
	_ = a[len(t)-1]
	scanBlocksAVX2(&src[0], len(t), &t[0], &a[0])
}

// sibRunAVX2 is sibKern.runGeneric on the block a (fastbody_amd64.s).
//
//go:noescape
func sibRunAVX2(a *sibArgs)

// run takes the siblings at data[q:] that repeat the record, at most
// max, and writes their canonical form to out[oo:] (out's length is its
// room) when emit and k has pieces; it returns how many, where the last
// ends and the output offset after it (sibKern.runGeneric, with AVX2
// where the CPU has it), hashing its canonical form as it goes into kh
// when not nil (kernHash).
func (k *sibKern) run(data []byte, q, end int, out []byte, oo, max, maxAttr, maxText int, emit bool, kh *kernHash) (sibs, in, o int) {
	if !haveAVX2 {
		return k.runGeneric(data, q, end, out, oo, max, maxAttr, maxText, emit)
	}
	return k.runAVX2(data, q, end, out, oo, max, maxAttr, maxText, emit, kh)
}

func (k *sibKern) runAVX2(data []byte, q, end int, out []byte, oo, max, maxAttr, maxText int, emit bool, kh *kernHash) (sibs, in, o int) {
	if len(data) == 0 || len(k.segs) == 0 || max <= 0 {
		return 0, q, oo
	}
	a := sibArgs{
		data: &data[0], end: min(end, len(data)-kernSlack), q: q, oo: oo, ocap: len(out), max: max,
		maxAttr: maxAttr, maxText: maxText, segs: &k.segs[0], pos: &k.pos[0],
	}
	if emit && len(k.ops) > 0 {
		if len(out) == 0 {
			return 0, q, oo
		}
		a.out, a.ops = &out[0], &k.ops[0]
		if k.swap {
			a.sw = &k.sw
		}
	}
	if kh != nil && kh.s != nil {
		a.hs, a.hbase, a.hp, a.hend = kh.s, a.data, kh.hp, kh.hp
		if a.ops != nil {
			a.hbase = a.out
		}
	}
	sibRunAVX2(&a)
	if a.hs != nil {
		kh.hp = a.hp
	}
	return a.sibs, a.q, a.oo
}
