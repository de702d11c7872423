#include "textflag.h"

// func scanBlocksAVX2(src *byte, blocks int, t, a *uint64)
//
// For each 64-byte block: t gets a bit per stopText byte ('<' '&' '>',
// bytes below 0x20 but tab and LF, bytes from 0x80), a a bit per stopAttr
// byte ('"' '&' '<', bytes below 0x20, bytes from 0x80). "Below 0x20 or
// from 0x80" is one signed compare: 0x20 > c as signed bytes.
TEXT ·scanBlocksAVX2(SB), NOSPLIT, $0-32
	MOVQ src+0(FP), SI
	MOVQ blocks+8(FP), CX
	MOVQ t+16(FP), DI
	MOVQ a+24(FP), DX
	MOVQ $0x3c, AX
	MOVQ AX, X8
	VPBROADCASTB X8, Y8  // '<'
	MOVQ $0x3e, AX
	MOVQ AX, X9
	VPBROADCASTB X9, Y9  // '>'
	MOVQ $0x26, AX
	MOVQ AX, X10
	VPBROADCASTB X10, Y10 // '&'
	MOVQ $0x22, AX
	MOVQ AX, X11
	VPBROADCASTB X11, Y11 // '"'
	MOVQ $0x20, AX
	MOVQ AX, X12
	VPBROADCASTB X12, Y12 // 0x20
	MOVQ $0x09, AX
	MOVQ AX, X13
	VPBROADCASTB X13, Y13 // tab
	MOVQ $0x0a, AX
	MOVQ AX, X14
	VPBROADCASTB X14, Y14 // LF

#define HALF(off, tmask, amask) \
	VMOVDQU off(SI), Y0 \
	VPCMPEQB Y0, Y8, Y1 \
	VPCMPEQB Y0, Y10, Y2 \
	VPOR Y1, Y2, Y1 \
	VPCMPEQB Y0, Y11, Y2 \
	VPOR Y1, Y2, Y3 \
	VPCMPGTB Y0, Y12, Y4 \
	VPOR Y3, Y4, Y3 \
	VPCMPEQB Y0, Y13, Y5 \
	VPCMPEQB Y0, Y14, Y6 \
	VPOR Y5, Y6, Y5 \
	VPANDN Y4, Y5, Y4 \
	VPCMPEQB Y0, Y9, Y6 \
	VPOR Y1, Y6, Y1 \
	VPOR Y1, Y4, Y1 \
	VPMOVMSKB Y1, tmask \
	VPMOVMSKB Y3, amask

loop:
	TESTQ CX, CX
	JZ    done
	HALF(0, AX, BX)
	HALF(32, R8, R9)
	SHLQ $32, R8
	ORQ  R8, AX
	SHLQ $32, R9
	ORQ  R9, BX
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
