#include "textflag.h"

// func scanBlocksAVX2(src *byte, blocks int, t, a *uint64)
//
// For each 64-byte block: t gets a bit per stopText byte ('<' '&' '>',
// bytes below 0x20 but tab and LF, bytes from 0x80), a a bit per stopAttr
// byte ('"' '&' '<', bytes below 0x20, bytes from 0x80). Each byte is
// classified by two table lookups (VPSHUFB), one by its low nibble and one
// by its high nibble, ANDed: a class bit survives when both nibbles allow
// it. The classes (tables scanLo and scanHi; TestScanBlocks checks the
// result against stopClass on every byte):
//   0x01 control but tab and LF   0x02 tab, LF   0x04 0x10-0x1f, from 0x80
//   0x08 '&'   0x10 '"'   0x20 '<'   0x40 '>'
// stopText is the classes 0x6d, stopAttr 0x3f.
DATA scanLo<>+0(SB)/8, $0x050d050505150505
DATA scanLo<>+8(SB)/8, $0x0545052505060605
GLOBL scanLo<>(SB), RODATA|NOPTR, $16
DATA scanHi<>+0(SB)/8, $0x0000000060180403
DATA scanHi<>+8(SB)/8, $0x0404040404040404
GLOBL scanHi<>(SB), RODATA|NOPTR, $16
DATA scanConst<>+0(SB)/8, $0x00000000003f6d0f
GLOBL scanConst<>(SB), RODATA|NOPTR, $8

TEXT ·scanBlocksAVX2(SB), NOSPLIT, $0-32
	MOVQ src+0(FP), SI
	MOVQ blocks+8(FP), CX
	MOVQ t+16(FP), DI
	MOVQ a+24(FP), DX
	VBROADCASTI128 scanLo<>(SB), Y8
	VBROADCASTI128 scanHi<>(SB), Y9
	// The byte constants come from memory: a legacy SSE MOVQ into an X
	// register after a 256-bit instruction costs a state transition
	// (about 150 ns a call on an AMD EPYC host).
	VPBROADCASTB scanConst<>+0(SB), Y10 // nibble mask
	VPBROADCASTB scanConst<>+1(SB), Y11 // stopText classes
	VPBROADCASTB scanConst<>+2(SB), Y12 // stopAttr classes
	VPXOR Y13, Y13, Y13

// HALF sets the masks of 32 bytes inverted: a bit per byte that is not a
// stop.
#define HALF(off, tmask, amask) \
	VMOVDQU off(SI), Y0 \
	VPSRLW $4, Y0, Y1 \
	VPAND Y10, Y0, Y0 \
	VPAND Y10, Y1, Y1 \
	VPSHUFB Y0, Y8, Y0 \
	VPSHUFB Y1, Y9, Y1 \
	VPAND Y0, Y1, Y0 \
	VPAND Y11, Y0, Y1 \
	VPAND Y12, Y0, Y2 \
	VPCMPEQB Y13, Y1, Y1 \
	VPCMPEQB Y13, Y2, Y2 \
	VPMOVMSKB Y1, tmask \
	VPMOVMSKB Y2, amask

loop:
	TESTQ CX, CX
	JZ    done
	HALF(0, AX, BX)
	HALF(32, R8, R9)
	SHLQ $32, R8
	ORQ  R8, AX
	NOTQ AX
	SHLQ $32, R9
	ORQ  R9, BX
	NOTQ BX
	MOVQ AX, (DI)
	MOVQ BX, (DX)
	ADDQ $64, SI
	ADDQ $8, DI
	ADDQ $8, DX
	DECQ CX
	JMP  loop

done:
	VZEROUPPER
	RET
