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

// func sibRunAVX2(a *sibArgs)
//
// sibKern.runGeneric (fastbody_kern.go) on the block a: the siblings at
// data[q:] that repeat the compiled record, at most max, each taken
// whole or not at all. Its fixed segments are compared 32 bytes at a
// time (VPCMPEQB against the padded copy, the last chunk masked), each
// variable part runs to its first stop byte (the classification of
// scanBlocksAVX2 of its 64-byte block, both masks kept while the search
// stays in the block, stopAttr or stopText by the part's kind), then the
// limits, then the output pieces are copied 32 bytes at a time (the
// output has 32 bytes of slack, data 32 bytes past the sibling). Every
// load at p is preceded by p+32 <= dlen. VEX encodings only, VZEROUPPER
// before RET (the note on the SSE/AVX transition above).
//
// Registers: SI data, DI a, R8 the sibling's start, R9 the position,
// R10 the segment or piece, R11 the fixed bytes or the output, R12 the
// text total or a piece's length, R13 siblings taken, R14 the 64-byte
// block (an offset in data, a multiple of 64) whose stop masks are in
// A_MASKS, BX a part's start or a piece's source, AX CX DX scratch. R14 is free in ABI0 (the ABI wrapper restores g); R15 is not
// used (dynamic linking takes it).

// sibArgs (TestSibArgsLayout)
#define A_DATA 0
#define A_DLEN 8
#define A_END 16
#define A_Q 24
#define A_OUT 32
#define A_OO 40
#define A_OCAP 48
#define A_MAX 56
#define A_SIBS 64
#define A_MAXATTR 72
#define A_MAXTEXT 80
#define A_SEGS 88
#define A_FIX 96
#define A_PIECES 104
#define A_NPIECE 112
#define A_POS 120
#define A_MASKS 128
// kernSeg
#define S_OFF 0
#define S_FULL 4
#define S_REM 8
#define S_REMN 12
#define S_KIND 16
#define S_POS 20
#define S_SIZE 24
// kernPiece
#define P_RA 0
#define P_OA 4
#define P_RB 8
#define P_OB 12
#define P_SIZE 16

// KHALF is HALF on the 32 bytes at off in the block at R14.
#define KHALF(off, tmask, amask) \
	VMOVDQU off(SI)(R14*1), Y0 \
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

TEXT ·sibRunAVX2(SB), NOSPLIT, $0-8
	MOVQ a+0(FP), DI
	MOVQ A_DATA(DI), SI
	VBROADCASTI128 scanLo<>(SB), Y8
	VBROADCASTI128 scanHi<>(SB), Y9
	VPBROADCASTB scanConst<>+0(SB), Y10 // nibble mask
	VPBROADCASTB scanConst<>+1(SB), Y11 // stopText classes
	VPBROADCASTB scanConst<>+2(SB), Y12 // stopAttr classes
	VPXOR Y13, Y13, Y13
	MOVQ A_Q(DI), R8
	XORQ R13, R13
	MOVQ $-128, R14 // no block classified

sib:
	CMPQ R13, A_MAX(DI)
	JGE  ret
	MOVQ R8, R9
	XORQ R12, R12
	MOVQ A_SEGS(DI), R10

seg:
	MOVLQSX S_OFF(R10), R11
	ADDQ    A_FIX(DI), R11
	MOVL    S_FULL(R10), CX

chunk:
	TESTL CX, CX
	JZ    last
	LEAQ  32(R9), DX
	CMPQ  DX, A_DLEN(DI)
	JGT   ret
	VMOVDQU   (SI)(R9*1), Y0
	VPCMPEQB  (R11), Y0, Y0
	VPMOVMSKB Y0, DX
	CMPL      DX, $0xffffffff
	JNE       ret
	ADDQ $32, R9
	ADDQ $32, R11
	DECL CX
	JMP  chunk

last:
	MOVL  S_REM(R10), CX
	TESTL CX, CX
	JZ    part
	LEAQ  32(R9), DX
	CMPQ  DX, A_DLEN(DI)
	JGT   ret
	VMOVDQU   (SI)(R9*1), Y0
	VPCMPEQB  (R11), Y0, Y0
	VPMOVMSKB Y0, DX
	NOTL      DX
	ANDL      CX, DX
	JNZ       ret
	MOVLQSX S_REMN(R10), CX
	ADDQ    CX, R9

part:
	MOVL S_KIND(R10), CX
	CMPL CX, $2
	JEQ  sibend
	MOVQ R9, BX

	// The part ends at the first stop byte of its kind at or after R9,
	// found in the stop masks of the 64-byte block at R14 (both kinds,
	// in A_MASKS, computed once per block for all the siblings in it).
find:
	MOVQ R9, AX
	SUBQ R14, AX
	CMPQ AX, $64
	JAE  far
	MOVL S_KIND(R10), DX
	MOVQ A_MASKS(DI)(DX*8), DX
	MOVQ AX, CX
	SHRQ CX, DX
	TESTQ DX, DX
	JZ   onward
	BSFQ DX, DX
	ADDQ DX, R9
	CMPQ R9, A_END(DI)
	JGE  ret
	MOVQ R9, DX
	SUBQ BX, DX
	MOVL S_KIND(R10), CX
	TESTL CX, CX
	JNZ  textlen
	CMPQ DX, A_MAXATTR(DI)
	JGT  ret
	JMP  partend

textlen:
	ADDQ DX, R12
	JMP  partend

onward:
	// No stop in the rest of the block: on at the next one.
	LEAQ 64(R14), R9
	CMPQ R9, A_END(DI)
	JGE  ret
	MOVQ R9, R14
	JMP  classify

far:
	// Past the block: the next one (most often), else R9's.
	CMPQ AX, $128
	JAE  jump
	ADDQ $64, R14
	JMP  classify

jump:
	MOVQ R9, R14
	ANDQ $-64, R14

classify:
	LEAQ 64(R14), DX
	CMPQ DX, A_DLEN(DI)
	JGT  ret
	KHALF(0, AX, DX)
	KHALF(32, R11, CX)
	SHLQ $32, R11
	ORQ  R11, AX
	NOTQ AX
	SHLQ $32, CX
	ORQ  CX, DX
	NOTQ DX
	MOVQ DX, A_MASKS(DI)   // kernAttr
	MOVQ AX, A_MASKS+8(DI) // kernText
	JMP  find

partend:
	MOVQ    A_POS(DI), AX
	MOVLQSX S_POS(R10), CX
	MOVQ    BX, (AX)(CX*1)
	MOVQ    R9, 8(AX)(CX*1)
	ADDQ    $S_SIZE, R10
	JMP     seg

sibend:
	CMPQ R9, A_END(DI)
	JGT  ret
	CMPQ R12, A_MAXTEXT(DI)
	JGT  ret
	LEAQ 32(R9), DX
	CMPQ DX, A_DLEN(DI)
	JGT  ret
	MOVQ A_NPIECE(DI), CX
	TESTQ CX, CX
	JZ   take
	// Room for the sibling's output (as long as its input) and slack.
	MOVQ R9, DX
	SUBQ R8, DX
	ADDQ A_OO(DI), DX
	ADDQ $32, DX
	CMPQ DX, A_OCAP(DI)
	JGT  ret
	MOVQ A_POS(DI), AX
	MOVQ R8, 0(AX)
	MOVQ R9, 8(AX)
	MOVQ A_PIECES(DI), R10
	MOVQ A_OUT(DI), R11
	ADDQ A_OO(DI), R11

piece:
	MOVLQSX P_RA(R10), DX
	MOVQ    (AX)(DX*8), BX
	MOVLQSX P_OA(R10), DX
	ADDQ    DX, BX
	MOVLQSX P_RB(R10), DX
	MOVQ    (AX)(DX*8), R12
	MOVLQSX P_OB(R10), DX
	ADDQ    DX, R12
	SUBQ    BX, R12
	JLE     nextpiece
	ADDQ    SI, BX

copy:
	VMOVDQU (BX), Y0
	VMOVDQU Y0, (R11)
	ADDQ $32, BX
	ADDQ $32, R11
	SUBQ $32, R12
	JGT  copy
	ADDQ R12, R11 // back over the bytes past the piece

nextpiece:
	ADDQ $P_SIZE, R10
	DECQ CX
	JNZ  piece
	SUBQ A_OUT(DI), R11
	MOVQ R11, A_OO(DI)

take:
	INCQ R13
	MOVQ R9, R8
	JMP  sib

ret:
	MOVQ R8, A_Q(DI)
	MOVQ R13, A_SIBS(DI)
	VZEROUPPER
	RET
