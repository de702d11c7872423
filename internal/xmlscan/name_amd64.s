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
