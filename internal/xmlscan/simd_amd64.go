package xmlscan

import (
	"github.com/segmentio/asm/cpu"
	"github.com/segmentio/asm/cpu/x86"
)

var (
	// haveNameSIMD: nameRun's 128-bit VEX instructions need AVX.
	haveNameSIMD = cpu.X86.Has(x86.AVX)
	// haveWideSIMD: charsRun and valueRun use 256-bit AVX2.
	haveWideSIMD = cpu.X86.Has(x86.AVX2)
)

// nameRun classifies the bytes at src sixteen at a time while at least
// sixteen of the n bytes are left (simd_amd64.s): it returns how many
// name bytes (nameTab's nameCont) lead, and flags: nameRunHigh when one
// of them is non-ASCII, nameRunStop when it found the byte that ends the
// run (otherwise fewer than sixteen bytes were left and the caller goes
// on byte by byte from src+k).
//
//go:noescape
func nameRun(src *byte, n int) (k int, flags uint32)

// charsRun returns how many of the n bytes at src lead that are plain
// (0x20-0x7f: XML Chars that are neither a control character nor part of
// a multi-byte sequence), looking at 32 bytes at a time while at least 32
// are left (simd_amd64.s). Fewer than 32 plain bytes may be left to the
// caller at the end.
//
//go:noescape
func charsRun(src *byte, n int) int

// valueRun looks for quote in the n bytes at src, 32 at a time while at
// least 32 are left (simd_amd64.s). It returns how many bytes it passed
// (up to the quote when found) and flags: the attrSpecial classes of
// those bytes, and valueRunFound when it stopped at the quote.
//
//go:noescape
func valueRun(src *byte, n int, quote byte) (k int, flags uint32)
