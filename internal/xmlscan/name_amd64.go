package xmlscan

import (
	"github.com/segmentio/asm/cpu"
	"github.com/segmentio/asm/cpu/x86"
)

// haveNameSIMD: nameRun's 128-bit VEX instructions need AVX.
var haveNameSIMD = cpu.X86.Has(x86.AVX)

// nameRun classifies the bytes at src sixteen at a time while at least
// sixteen of the n bytes are left (name_amd64.s): it returns how many
// name bytes (nameTab's nameCont) lead, and flags: nameRunHigh when one
// of them is non-ASCII, nameRunStop when it found the byte that ends the
// run (otherwise fewer than sixteen bytes were left and the caller goes
// on byte by byte from src+k).
//
//go:noescape
func nameRun(src *byte, n int) (k int, flags uint32)
