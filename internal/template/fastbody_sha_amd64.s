#include "textflag.h"
#include "fastbody_sha.h"

// func cpuSHA() bool
TEXT ·cpuSHA(SB), NOSPLIT, $0-1
	MOVL $7, AX
	XORL CX, CX
	CPUID
	SHRL $29, BX
	ANDL $1, BX
	MOVB BX, ret+0(FP)
	RET

// func shaNIBlocks(s *[8]uint32, p *byte, blocks int)
//
// The state stays in X14 and X15 from block to block (SHA_BLOCK,
// fastbody_sha.h). 128-bit VEX and SHA instructions only: no VZEROUPPER
// needed.
TEXT ·shaNIBlocks(SB), NOSPLIT, $0-24
	MOVQ s+0(FP), DI
	MOVQ p+8(FP), SI
	MOVQ blocks+16(FP), CX
	TESTQ CX, CX
	JZ    done
	VMOVDQU (DI), X14
	VMOVDQU 16(DI), X15

loop:
	SHA_BLOCK(SI)
	ADDQ $64, SI
	DECQ CX
	JNZ  loop
	VMOVDQU X14, (DI)
	VMOVDQU X15, 16(DI)

done:
	RET
