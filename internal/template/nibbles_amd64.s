#include "textflag.h"

DATA nibbleMask<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nibbleMask<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nibbleMask<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nibbleMask<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL nibbleMask<>(SB), RODATA|NOPTR, $32

// func noneAVX2(p *byte, n int, l *nibbleLUT) bool
//
// n >= 32. Each 32-byte block: its low and high nibbles index l.lo and
// l.hi (VPSHUFB), a byte whose two lookups share no bit is refused. The
// last block is the last 32 bytes, overlapping the one before.
TEXT ·noneAVX2(SB), NOSPLIT, $0-25
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ l+16(FP), DX
	VMOVDQU 0(DX), Y13   // lo
	VMOVDQU 32(DX), Y14  // hi
	VMOVDQU nibbleMask<>(SB), Y15 // from memory: no SSE instruction between VEX ones
	VPXOR Y12, Y12, Y12  // zero
	VPXOR Y11, Y11, Y11  // refused bytes, accumulated
	LEAQ -32(SI)(CX*1), DI

#define BLOCK(src) \
	VMOVDQU (src), Y0 \
	VPSRLW $4, Y0, Y1 \
	VPAND Y15, Y1, Y1 \
	VPAND Y15, Y0, Y0 \
	VPSHUFB Y0, Y13, Y0 \
	VPSHUFB Y1, Y14, Y1 \
	VPAND Y0, Y1, Y0 \
	VPCMPEQB Y12, Y0, Y0 \
	VPOR Y0, Y11, Y11

loop:
	CMPQ SI, DI
	JAE  last
	BLOCK(SI)
	ADDQ $32, SI
	JMP  loop

last:
	BLOCK(DI)
	VPTEST Y11, Y11
	SETEQ  ret+24(FP)
	VZEROUPPER
	RET
