#include "textflag.h"
#include "fastbody_sha.h"

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
// whole or not at all, all before lim (a.end; fastbody_kern.go says why
// every load and store is then in bounds). Its segments are walked in
// order, each up to 32 fixed bytes compared at once (the input XOR the
// descriptor's bytes, VPTEST under its byte mask), then its part, which
// runs to its first stop byte (the classification of scanBlocksAVX2 of
// its 64-byte block, both masks kept while the search stays in the
// block, stopAttr or stopText by the part's kind), then the limits, then
// the output: the sibling copied 32 bytes at a time, then the ops.
// VEX encodings only, VZEROUPPER before RET (the note on the SSE/AVX
// transition above), but for the SHA instructions when hashing as it
// goes (a.hs, kernHash): the blocks of the canonical form the siblings
// complete, a quarter of a block at the start of a segment while any is
// pending, after a VZEROUPPER (see hseg).
//
// Registers: SI data, DI a, R8 the sibling's start, R9 the position,
// R10 the segment or op, R11 a part's kind or the output, R12 the
// quarters of SHA-256 pending (hseg; the sibling's text total is in
// a.text), R13 siblings taken, R14 the 64-byte block (an offset in
// data, a multiple of 64) whose stop masks are in A_MASKS, BX a part's
// start or a copy's source, CX a copy's length, AX CX DX scratch; X14 and X15 the digest's state when
// hashing, X3 to X6 the message schedule from one quarter to the next,
// X0 and X7 the rounds' scratch (SHA_Q0 to SHA_Q3); Y8 and Y9 the
// nibble tables, Y13 zero. R14 is free in ABI0 (the ABI wrapper restores
// g, and zeroes X15); R15 is not used (dynamic linking takes it).
//
// The instruction count is the budget (issue 14). On this project's
// host the SHA rounds hide little of other work: a block's rounds with
// 400 independent ADDs spread over its quarters took 72.6 ns, the rounds
// alone 46.7 and the ADDs alone 39.5 (CPU time, one run); the same
// kernel with its SHA instructions replaced by one-cycle stand-ins took
// 63 ns a sibling against 74-78 with them. So each instruction the
// kernel saves shows (~96 fewer a sibling: 1.45 -> 1.30 x SHA-256 on
// BenchmarkSibKern/avx2-hashing), and where the quarters run matters
// less (a quarter at each block classified as well, or two at a time:
// both slower).

// sibArgs (TestSibArgsLayout)
#define A_DATA 0
#define A_END 8
#define A_Q 16
#define A_OUT 24
#define A_OO 32
#define A_OCAP 40
#define A_MAX 48
#define A_SIBS 56
#define A_MAXATTR 64
#define A_MAXTEXT 72
#define A_SEGS 80
#define A_OPS 96
#define A_POS 104
#define A_MASKS 112
#define A_HS 128
#define A_HBASE 136
#define A_HP 144
#define A_HEND 152
#define A_TEXT 160
#define A_HSAVE 176
#define A_SW 208
// kernSeg
#define S_FIX 0
#define S_MASK 32
#define S_REMN 64
#define S_KIND 72
#define S_POS 76
#define S_SIZE 80
// kernOp
#define O_KIND 0
#define O_P 4
#define O_C 8
#define O_SIZE 16

// The classification's byte constants (scanConst's, 32 of each), read
// as memory operands: only the two tables are kept in registers, which
// each SHA step's VZEROUPPER leaves to restore.
DATA kernNib<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA kernNib<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA kernNib<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA kernNib<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL kernNib<>(SB), RODATA|NOPTR, $32
DATA kernText<>+0(SB)/8, $0x6d6d6d6d6d6d6d6d
DATA kernText<>+8(SB)/8, $0x6d6d6d6d6d6d6d6d
DATA kernText<>+16(SB)/8, $0x6d6d6d6d6d6d6d6d
DATA kernText<>+24(SB)/8, $0x6d6d6d6d6d6d6d6d
GLOBL kernText<>(SB), RODATA|NOPTR, $32
DATA kernAttr<>+0(SB)/8, $0x3f3f3f3f3f3f3f3f
DATA kernAttr<>+8(SB)/8, $0x3f3f3f3f3f3f3f3f
DATA kernAttr<>+16(SB)/8, $0x3f3f3f3f3f3f3f3f
DATA kernAttr<>+24(SB)/8, $0x3f3f3f3f3f3f3f3f
GLOBL kernAttr<>(SB), RODATA|NOPTR, $32

// KHALF leaves in Y1 and Y2 0xff for each stopText and stopAttr byte of
// the 32 bytes at off in the block at R14 (HALF's classification; the
// class bits are below 0x80, so a class is present when the byte is
// greater than zero as a signed byte: no inversion needed).
#define KHALF(off) \
	VMOVDQU off(SI)(R14*1), Y0 \
	VPSRLW $4, Y0, Y1 \
	VPAND kernNib<>(SB), Y0, Y0 \
	VPAND kernNib<>(SB), Y1, Y1 \
	VPSHUFB Y0, Y8, Y0 \
	VPSHUFB Y1, Y9, Y1 \
	VPAND Y0, Y1, Y0 \
	VPAND kernText<>(SB), Y0, Y1 \
	VPAND kernAttr<>(SB), Y0, Y2 \
	VPCMPGTB Y13, Y1, Y1 \
	VPCMPGTB Y13, Y2, Y2

// COPY32 copies CX bytes (at least 1) from BX to DX, 32 at a time,
// writing and reading up to 31 bytes past them; DX ends past them.
#define COPY32(label) \
label: \
	VMOVDQU (BX), Y0 \
	VMOVDQU Y0, (DX) \
	ADDQ $32, BX \
	ADDQ $32, DX \
	SUBQ $32, CX \
	JGT  label \
	ADDQ CX, DX

// HNEXT follows a quarter: another while more than a block is pending,
// else the segment.
#define HNEXT \
	CMPQ R12, $4 \
	JGT  hqrun \
	JMP  segin

TEXT ·sibRunAVX2(SB), NOSPLIT, $0-8
	MOVQ a+0(FP), DI
	MOVQ A_DATA(DI), SI
	VBROADCASTI128 scanLo<>(SB), Y8
	VBROADCASTI128 scanHi<>(SB), Y9
	VPXOR Y13, Y13, Y13
	MOVQ A_Q(DI), R8
	XORQ R12, R12
	XORQ R13, R13
	MOVQ $-128, R14 // no block classified
	MOVQ A_HS(DI), AX
	TESTQ AX, AX
	JZ   sib
	VMOVDQU (AX), X14 // the digest's state, kept in X14 and X15
	VMOVDQU 16(AX), X15

sib:
	CMPQ R13, A_MAX(DI)
	JGE  ret
	CMPQ R8, A_END(DI)
	JGE  ret
	MOVQ R8, R9
	MOVQ $0, A_TEXT(DI)
	MOVQ A_SEGS(DI), R10

	// A segment: its fixed bytes (0 to 32) XOR the input, tested under
	// their byte mask; R9 is before lim here (a sibling's start, a
	// part's end, or checked after a chunk).
seg:
	TESTQ R12, R12
	JNZ   hseg

segin:
	VMOVDQU (SI)(R9*1), Y0
	VPXOR   S_FIX(R10), Y0, Y0
	VPTEST  S_MASK(R10), Y0
	JNZ     ret
	ADDQ    S_REMN(R10), R9
	MOVL    S_KIND(R10), R11
	CMPL    R11, $2
	JAE     nopart
	MOVQ    R9, BX

	// The part (kind R11) ends at the first stop byte of its kind at or
	// after R9, found in the stop masks of the 64-byte block at R14
	// (both kinds, in A_MASKS, computed once per block for all the
	// siblings in it). TESTQ and JZ first, then TZCNT: BSF's own ZF
	// for the branch made the kernel ~20 % slower on this host (its
	// flags come late), whatever the instructions it saved.
find:
	MOVQ R9, CX
	SUBQ R14, CX
	CMPQ CX, $64
	JAE  far
	MOVQ A_MASKS(DI)(R11*8), DX
	SHRQ CX, DX
	TESTQ DX, DX
	JZ   onward
	TZCNTQ DX, DX
	ADDQ DX, R9
	CMPQ R9, A_END(DI)
	JGE  ret
	MOVQ R9, DX
	SUBQ BX, DX
	TESTL R11, R11
	JNZ  textlen
	CMPQ DX, A_MAXATTR(DI)
	JGT  ret

partend:
	MOVQ    A_POS(DI), AX
	MOVLQSX S_POS(R10), CX
	MOVQ    BX, (AX)(CX*1)
	MOVQ    R9, 8(AX)(CX*1)
	ADDQ    $S_SIZE, R10
	JMP     seg

textlen:
	ADDQ DX, A_TEXT(DI)
	JMP  partend

nopart:
	// kernEnd (the flags of CMPL R11, $2), else kernChunk: the next
	// segment's bytes must start before lim.
	JEQ  sibend
	CMPQ R9, A_END(DI)
	JGE  ret
	ADDQ $S_SIZE, R10
	JMP  seg

onward:
	// No stop in the rest of the block: on at the next one.
	LEAQ 64(R14), R9
	CMPQ R9, A_END(DI)
	JGE  ret
	MOVQ R9, R14
	JMP  classify

far:
	// Past the block: the next one (most often), else R9's.
	CMPQ CX, $128
	JAE  jump
	ADDQ $64, R14
	JMP  classify

jump:
	MOVQ R9, R14
	ANDQ $-64, R14

classify:
	// The tables' upper halves, which a SHA step's VZEROUPPER cleared
	// (their low halves are the same), are needed only here: restored
	// here, once a block (a no-op when not hashing). Y13 stays zero.
	VINSERTI128 $1, X8, Y8, Y8
	VINSERTI128 $1, X9, Y9, Y9
	KHALF(0)
	VPMOVMSKB Y1, AX
	VPMOVMSKB Y2, DX
	KHALF(32)
	VPMOVMSKB Y1, CX
	SHLQ $32, CX
	ORQ  CX, AX
	VPMOVMSKB Y2, CX
	SHLQ $32, CX
	ORQ  CX, DX
	MOVQ DX, A_MASKS(DI)   // kernAttr
	MOVQ AX, A_MASKS+8(DI) // kernText
	JMP  find

sibend:
	CMPQ R9, A_END(DI)
	JGT  ret
	MOVQ A_TEXT(DI), CX
	CMPQ CX, A_MAXTEXT(DI)
	JGT  ret
	MOVQ A_OPS(DI), R10
	TESTQ R10, R10
	JZ   take
	// Room for the sibling's output (as long as its input) and slack.
	MOVQ R9, CX
	SUBQ R8, CX
	MOVQ A_OO(DI), R11
	LEAQ 32(R11)(CX*1), DX
	CMPQ DX, A_OCAP(DI)
	JGT  ret
	// The sibling as it is, then the ops; R11 the sibling's output.
	ADDQ A_OUT(DI), R11
	LEAQ (SI)(R8*1), BX
	MOVQ R11, DX
	COPY32(bulk)
	MOVQ A_POS(DI), AX
	CMPQ A_SW(DI), $0
	JNE  swap2

op:
	MOVLQSX O_P(R10), CX
	MOVQ    (AX)(CX*1), BX
	MOVLQSX O_C(R10), CX
	ADDQ    CX, BX // x
	MOVL    O_KIND(R10), CX
	CMPL    CX, $1
	JNE     notattr
	// opAttr: data[x:end+1] at DX.
	MOVLQSX O_P(R10), CX
	MOVQ    8(AX)(CX*1), CX
	INCQ    CX
	SUBQ    BX, CX
	ADDQ    SI, BX
	COPY32(attr)
	ADDQ $O_SIZE, R10
	JMP  op

notattr:
	JGT repair
	// opSeek: the output goes on at x.
	LEAQ (R11)(BX*1), DX
	SUBQ R8, DX
	ADDQ $O_SIZE, R10
	JMP  op

repair:
	CMPL CX, $3
	JEQ  emitted
	// opRepair: the input's 32 bytes at x over what the copies wrote
	// past the tag's end (the bulk copy wrote them before).
	VMOVDQU (SI)(BX*1), Y0
	VMOVDQU Y0, (DX)
	ADDQ $O_SIZE, R10
	JMP  op

	// swap2: the ops of a.sw (sibKern.swap) in a row, as the op loop
	// runs them: opSeek, opAttr twice, opRepair; R10 the descriptors.
swap2:
	MOVQ A_SW(DI), R10
	MOVQ 0(R10), CX
	MOVQ (AX)(CX*1), DX
	ADDQ 8(R10), DX
	SUBQ R8, DX
	ADDQ R11, DX
	MOVQ 16(R10), CX
	MOVQ (AX)(CX*1), BX
	MOVQ 8(AX)(CX*1), CX
	ADDQ 24(R10), BX
	INCQ CX
	SUBQ BX, CX
	ADDQ SI, BX
	COPY32(sw1)
	MOVQ 32(R10), CX
	MOVQ (AX)(CX*1), BX
	MOVQ 8(AX)(CX*1), CX
	ADDQ 40(R10), BX
	INCQ CX
	SUBQ BX, CX
	ADDQ SI, BX
	COPY32(sw2)
	MOVQ 48(R10), CX
	MOVQ (AX)(CX*1), BX
	ADDQ 56(R10), BX
	VMOVDQU (SI)(BX*1), Y0
	VMOVDQU Y0, (DX)

emitted:
	// DX: the end of the canonical form (the output).
	MOVQ R9, CX
	SUBQ R8, CX
	MOVQ A_OO(DI), DX
	ADDQ CX, DX
	MOVQ DX, A_OO(DI)
	JMP  taken

take:
	MOVQ R9, DX // the canonical form is the input

taken:
	INCQ R13
	MOVQ R9, R8
	CMPQ A_HS(DI), $0
	JEQ  sib
	// Hashing (a.hs): the whole 64-byte blocks of the canonical form
	// from a.hend up to DX are counted as four quarters each to hash
	// (R12), run one at the start of each segment (hseg). The SHA
	// rounds are a serial chain; spread over the loop, the core goes on
	// with the compares, scans and copies meanwhile (a whole block at
	// once filled the vector scheduler and the kernel waited behind it;
	// issue 14).
	SUBQ A_HEND(DI), DX
	ANDQ $-64, DX
	JZ   sib
	ADDQ DX, A_HEND(DI)
	SHRQ $4, DX
	ADDQ DX, R12
	JMP  sib

	// hseg runs the next quarter of the block at a.hp, and a second one
	// while more than a block is pending; R12 the quarters pending, the
	// next one's number -R12 mod 4 (each block counted adds four). The
	// SHA instructions are legacy SSE: run with the upper halves dirty,
	// each costs a state transition on this host (measured: 100 times
	// slower). So VZEROUPPER first (X3 to X6 and X14, X15 keep their
	// low halves, all the rounds use); the tables' upper halves are
	// restored where they are used, at classify.
hseg:
	VZEROUPPER

hqrun:
	DECQ R12
	TESTL $2, R12
	JZ   hq23
	TESTL $1, R12
	JZ   hq1
	MOVQ A_HP(DI), CX
	ADDQ A_HBASE(DI), CX
	VMOVDQU X14, A_HSAVE(DI)
	VMOVDQU X15, A_HSAVE+16(DI)
	SHA_Q0(CX)
	HNEXT

hq1:
	SHA_Q1
	HNEXT

hq23:
	TESTL $1, R12
	JZ   hq3
	SHA_Q2
	HNEXT

hq3:
	SHA_Q3
	VPADDD A_HSAVE(DI), X14, X14
	VPADDD A_HSAVE+16(DI), X15, X15
	ADDQ $64, A_HP(DI)
	HNEXT

ret:
	MOVQ R8, A_Q(DI)
	MOVQ R13, A_SIBS(DI)
	MOVQ A_HS(DI), AX
	TESTQ AX, AX
	JZ   out
	// The blocks counted and not begun are the caller's (a.hp is the
	// first); one begun (R12 not a multiple of four) is undone: the
	// state before it back.
	TESTQ $3, R12
	JZ   state
	VMOVDQU A_HSAVE(DI), X14
	VMOVDQU A_HSAVE+16(DI), X15

state:
	VMOVDQU X14, (AX)
	VMOVDQU X15, 16(AX)

out:
	VZEROUPPER
	RET
