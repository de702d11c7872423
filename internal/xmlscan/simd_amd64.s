#include "textflag.h"

// func nameRun(src *byte, n int) (k int, flags uint32)
//
// Each byte is classified by two table lookups (VPSHUFB), one by its low
// nibble and one by its high nibble, ANDed: it continues a name (nameTab's
// nameCont) iff a class bit survives. The classes (TestNameRunTables
// derives both tables from nameTab):
//   0x01 '-' '.'            (high nibble 2, low nibble D-E)
//   0x02 '0'-':' 'P'-'Z' 'p'-'z'  (high nibble 3, 5, 7, low nibble 0-A)
//   0x04 'A'-'O' 'a'-'o'    (high nibble 4, 6, low nibble 1-F)
//   0x08 '_'                (high nibble 5, low nibble F)
//   0x10 bytes from 0x80    (high nibble 8-F, any low nibble)
DATA nameLo<>+0(SB)/8, $0x1616161616161612
DATA nameLo<>+8(SB)/8, $0x1c15151414161616
GLOBL nameLo<>(SB), RODATA|NOPTR, $16
DATA nameHi<>+0(SB)/8, $0x02040a0402010000
DATA nameHi<>+8(SB)/8, $0x1010101010101010
GLOBL nameHi<>(SB), RODATA|NOPTR, $16
DATA nameNib<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nameNib<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL nameNib<>(SB), RODATA|NOPTR, $16

TEXT ·nameRun(SB), NOSPLIT, $0-28
	MOVQ src+0(FP), SI
	MOVQ n+8(FP), CX
	XORQ AX, AX // k
	XORL DX, DX // high bits of the name bytes so far
	VMOVDQU nameLo<>(SB), X8
	VMOVDQU nameHi<>(SB), X9
	VMOVDQU nameNib<>(SB), X10
	VPXOR   X13, X13, X13

loop:
	CMPQ CX, $16
	JB   short
	VMOVDQU (SI)(AX*1), X0
	VPMOVMSKB X0, BX     // a bit per byte from 0x80
	VPSRLW  $4, X0, X1
	VPAND   X10, X0, X0
	VPAND   X10, X1, X1
	VPSHUFB X0, X8, X0
	VPSHUFB X1, X9, X1
	VPAND   X0, X1, X0
	VPCMPEQB X13, X0, X0 // 0xff per byte that ends a name
	VPMOVMSKB X0, R8
	TESTL   R8, R8
	JNZ     stop
	ORL     BX, DX
	ADDQ    $16, AX
	SUBQ    $16, CX
	JMP     loop

stop:
	// R8^(R8-1) keeps the bits up to the first stop byte, which is
	// ASCII: the high bits it keeps are the name bytes'.
	LEAL  -1(R8), R9
	XORL  R8, R9
	ANDL  R9, BX
	ORL   BX, DX
	BSFL  R8, R8
	ADDQ  R8, AX
	MOVQ  AX, k+16(FP)
	MOVL  $2, R10
	TESTL DX, DX
	JZ    stopLow
	MOVL  $3, R10

stopLow:
	MOVL R10, flags+24(FP)
	RET

short:
	MOVQ  AX, k+16(FP)
	XORL  R10, R10
	TESTL DX, DX
	JZ    shortLow
	MOVL  $1, R10

shortLow:
	MOVL R10, flags+24(FP)
	RET

DATA charsConst<>+0(SB)/8, $0x000d0a09263c1f
GLOBL charsConst<>(SB), RODATA|NOPTR, $8

// func charsRun(src *byte, n int) int
//
// A byte is plain when it is greater than 0x1f as a signed byte: 0x20 to
// 0x7f (bytes from 0x80 are negative).
TEXT ·charsRun(SB), NOSPLIT, $0-24
	MOVQ src+0(FP), SI
	MOVQ n+8(FP), CX
	XORQ AX, AX
	VPBROADCASTB charsConst<>+0(SB), Y1

charsLoop:
	CMPQ CX, $32
	JB   charsDone
	VMOVDQU (SI)(AX*1), Y0
	VPCMPGTB Y1, Y0, Y2 // 0xff per plain byte
	VPMOVMSKB Y2, BX
	NOTL BX
	TESTL BX, BX
	JNZ  charsStop
	ADDQ $32, AX
	SUBQ $32, CX
	JMP  charsLoop

charsStop:
	BSFL BX, BX
	ADDQ BX, AX

charsDone:
	VZEROUPPER
	MOVQ AX, ret+16(FP)
	RET

// func valueRun(src *byte, n int, quote byte) (k int, flags uint32)
//
// Per 32 bytes: a mask of the quote, and masks of the attrSpecial classes
// ('<' 1, '&' 2, TAB LF CR 4); only the bytes before the first quote
// count.
TEXT ·valueRun(SB), NOSPLIT, $0-36
	MOVQ src+0(FP), SI
	MOVQ n+8(FP), CX
	XORQ AX, AX   // k
	XORL R11, R11 // flags
	VPBROADCASTB quote+16(FP), Y8
	VPBROADCASTB charsConst<>+1(SB), Y9  // '<'
	VPBROADCASTB charsConst<>+2(SB), Y10 // '&'
	VPBROADCASTB charsConst<>+3(SB), Y11 // TAB
	VPBROADCASTB charsConst<>+4(SB), Y12 // LF
	VPBROADCASTB charsConst<>+5(SB), Y13 // CR

// CLASSES ORs into R11 the class of each of Y2 ('<'), Y3 ('&') and Y4
// (TAB LF CR) that has a byte among the bits of R9: NEGL sets the carry
// for a non-zero mask, SBBL spreads it.
#define CLASSES \
	VPMOVMSKB Y2, R10 \
	ANDL R9, R10 \
	NEGL R10 \
	SBBL R10, R10 \
	ANDL $1, R10 \
	ORL  R10, R11 \
	VPMOVMSKB Y3, R10 \
	ANDL R9, R10 \
	NEGL R10 \
	SBBL R10, R10 \
	ANDL $2, R10 \
	ORL  R10, R11 \
	VPMOVMSKB Y4, R10 \
	ANDL R9, R10 \
	NEGL R10 \
	SBBL R10, R10 \
	ANDL $4, R10 \
	ORL  R10, R11

valueLoop:
	CMPQ CX, $32
	JB   valueDone
	VMOVDQU (SI)(AX*1), Y0
	VPCMPEQB Y8, Y0, Y1
	VPCMPEQB Y9, Y0, Y2
	VPCMPEQB Y10, Y0, Y3
	VPCMPEQB Y11, Y0, Y4
	VPCMPEQB Y12, Y0, Y5
	VPCMPEQB Y13, Y0, Y6
	VPOR     Y5, Y4, Y4
	VPOR     Y6, Y4, Y4
	VPOR     Y3, Y2, Y7
	VPOR     Y4, Y7, Y7
	VPMOVMSKB Y1, BX // quotes
	VPMOVMSKB Y7, R8 // bytes of any class
	TESTL BX, BX
	JNZ   valueQuote
	TESTL R8, R8
	JZ    valueNext
	MOVL  $-1, R9 // every byte of the block counts
	CLASSES

valueNext:
	ADDQ $32, AX
	SUBQ $32, CX
	JMP  valueLoop

valueQuote:
	// R9: the bits below the first quote, (BX-1) &^ BX.
	LEAL -1(BX), R9
	MOVL BX, R10
	NOTL R10
	ANDL R10, R9
	TESTL R9, R8
	JZ    valueFound
	CLASSES

valueFound:
	BSFL BX, BX
	ADDQ BX, AX
	ORL  $0x100, R11

valueDone:
	VZEROUPPER
	MOVQ AX, k+24(FP)
	MOVL R11, flags+32(FP)
	RET
