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
