// Copyright 2024 The Go Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file (third_party/go/LICENSE).
//
// SHA-256 with the SHA extensions (SHA-NI), derived from the Go
// standard library's blockSHANI (crypto/internal/fips140/sha256,
// sha256block_amd64.s) for the fast body (issue 14): one 64-byte block
// as a macro, so that the sibling kernel (fastbody_amd64.s) can hash its
// output inside its own loop and the core overlaps the two, and the
// state kept between blocks in the SHA-NI register layout (shaNI in
// fastbody_sha.go). Changes from the original: the registers (the state
// in X14 and X15, which the kernel leaves alone; the saved state in X1
// and X2; the message in X0 and X3 to X7), every instruction but the
// three SHA ones VEX-encoded (a legacy SSE instruction among 256-bit
// ones may cost a state transition; VEX has no alignment rule for its
// memory operands either), the byte flip and the round constants read
// from memory, the constants' table at a 16-byte stride, and VEX's
// three operands used where the original copied a register first (a
// MOVDQA before PADDD, PALIGNR or the message's byte flip): 27 fewer
// instructions a block, which the fused kernel's budget is counted in
// (issue 14).
//
// The round sequence is that file's, in the same order, its instructions
// rewritten as said.

DATA shaFlip<>+0(SB)/8, $0x0405060700010203
DATA shaFlip<>+8(SB)/8, $0x0c0d0e0f08090a0b
GLOBL shaFlip<>(SB), RODATA|NOPTR, $16

DATA shaK<>+0(SB)/4, $0x428a2f98
DATA shaK<>+4(SB)/4, $0x71374491
DATA shaK<>+8(SB)/4, $0xb5c0fbcf
DATA shaK<>+12(SB)/4, $0xe9b5dba5
DATA shaK<>+16(SB)/4, $0x3956c25b
DATA shaK<>+20(SB)/4, $0x59f111f1
DATA shaK<>+24(SB)/4, $0x923f82a4
DATA shaK<>+28(SB)/4, $0xab1c5ed5
DATA shaK<>+32(SB)/4, $0xd807aa98
DATA shaK<>+36(SB)/4, $0x12835b01
DATA shaK<>+40(SB)/4, $0x243185be
DATA shaK<>+44(SB)/4, $0x550c7dc3
DATA shaK<>+48(SB)/4, $0x72be5d74
DATA shaK<>+52(SB)/4, $0x80deb1fe
DATA shaK<>+56(SB)/4, $0x9bdc06a7
DATA shaK<>+60(SB)/4, $0xc19bf174
DATA shaK<>+64(SB)/4, $0xe49b69c1
DATA shaK<>+68(SB)/4, $0xefbe4786
DATA shaK<>+72(SB)/4, $0x0fc19dc6
DATA shaK<>+76(SB)/4, $0x240ca1cc
DATA shaK<>+80(SB)/4, $0x2de92c6f
DATA shaK<>+84(SB)/4, $0x4a7484aa
DATA shaK<>+88(SB)/4, $0x5cb0a9dc
DATA shaK<>+92(SB)/4, $0x76f988da
DATA shaK<>+96(SB)/4, $0x983e5152
DATA shaK<>+100(SB)/4, $0xa831c66d
DATA shaK<>+104(SB)/4, $0xb00327c8
DATA shaK<>+108(SB)/4, $0xbf597fc7
DATA shaK<>+112(SB)/4, $0xc6e00bf3
DATA shaK<>+116(SB)/4, $0xd5a79147
DATA shaK<>+120(SB)/4, $0x06ca6351
DATA shaK<>+124(SB)/4, $0x14292967
DATA shaK<>+128(SB)/4, $0x27b70a85
DATA shaK<>+132(SB)/4, $0x2e1b2138
DATA shaK<>+136(SB)/4, $0x4d2c6dfc
DATA shaK<>+140(SB)/4, $0x53380d13
DATA shaK<>+144(SB)/4, $0x650a7354
DATA shaK<>+148(SB)/4, $0x766a0abb
DATA shaK<>+152(SB)/4, $0x81c2c92e
DATA shaK<>+156(SB)/4, $0x92722c85
DATA shaK<>+160(SB)/4, $0xa2bfe8a1
DATA shaK<>+164(SB)/4, $0xa81a664b
DATA shaK<>+168(SB)/4, $0xc24b8b70
DATA shaK<>+172(SB)/4, $0xc76c51a3
DATA shaK<>+176(SB)/4, $0xd192e819
DATA shaK<>+180(SB)/4, $0xd6990624
DATA shaK<>+184(SB)/4, $0xf40e3585
DATA shaK<>+188(SB)/4, $0x106aa070
DATA shaK<>+192(SB)/4, $0x19a4c116
DATA shaK<>+196(SB)/4, $0x1e376c08
DATA shaK<>+200(SB)/4, $0x2748774c
DATA shaK<>+204(SB)/4, $0x34b0bcb5
DATA shaK<>+208(SB)/4, $0x391c0cb3
DATA shaK<>+212(SB)/4, $0x4ed8aa4a
DATA shaK<>+216(SB)/4, $0x5b9cca4f
DATA shaK<>+220(SB)/4, $0x682e6ff3
DATA shaK<>+224(SB)/4, $0x748f82ee
DATA shaK<>+228(SB)/4, $0x78a5636f
DATA shaK<>+232(SB)/4, $0x84c87814
DATA shaK<>+236(SB)/4, $0x8cc70208
DATA shaK<>+240(SB)/4, $0x90befffa
DATA shaK<>+244(SB)/4, $0xa4506ceb
DATA shaK<>+248(SB)/4, $0xbef9a3f7
DATA shaK<>+252(SB)/4, $0xc67178f2
GLOBL shaK<>(SB), RODATA|NOPTR, $256

// SHA_Q0 to SHA_Q3 are a block's rounds, a quarter each (16 rounds),
// on the state in X14 (the words F E B A, A highest) and X15 (H G D C),
// the message schedule in X3 to X6 from one to the next; they clobber X0
// and X7. SHA_Q0 loads the 64 bytes at p (a register). The state before
// the block is added after SHA_Q3 (SHA_BLOCK). Apart, they let the
// sibling kernel spread a block over its loop (fastbody_amd64.s).
//
// SHA_Q0: rounds 0 to 15.
#define SHA_Q0(p) \
	VMOVDQU 0(p), X3 \
	VPSHUFB shaFlip<>(SB), X3, X3 \
	VPADDD shaK<>+0(SB), X3, X0 \
	SHA256RNDS2 X0, X14, X15 \
	VPSHUFD $0x0e, X0, X0 \
	SHA256RNDS2 X0, X15, X14 \
	VMOVDQU 16(p), X4 \
	VPSHUFB shaFlip<>(SB), X4, X4 \
	VPADDD shaK<>+16(SB), X4, X0 \
	SHA256RNDS2 X0, X14, X15 \
	VPSHUFD $0x0e, X0, X0 \
	SHA256RNDS2 X0, X15, X14 \
	SHA256MSG1 X4, X3 \
	VMOVDQU 32(p), X5 \
	VPSHUFB shaFlip<>(SB), X5, X5 \
	VPADDD shaK<>+32(SB), X5, X0 \
	SHA256RNDS2 X0, X14, X15 \
	VPSHUFD $0x0e, X0, X0 \
	SHA256RNDS2 X0, X15, X14 \
	SHA256MSG1 X5, X4 \
	VMOVDQU 48(p), X6 \
	VPSHUFB shaFlip<>(SB), X6, X6 \
	VPADDD shaK<>+48(SB), X6, X0 \
	SHA256RNDS2 X0, X14, X15 \
	VPALIGNR $0x04, X5, X6, X7 \
	VPADDD X7, X3, X3 \
	SHA256MSG2 X6, X3 \
	VPSHUFD $0x0e, X0, X0 \
	SHA256RNDS2 X0, X15, X14 \
	SHA256MSG1 X6, X5

// SHA_Q1: rounds 16 to 31.
#define SHA_Q1 \
	VPADDD shaK<>+64(SB), X3, X0 \
	SHA256RNDS2 X0, X14, X15 \
	VPALIGNR $0x04, X6, X3, X7 \
	VPADDD X7, X4, X4 \
	SHA256MSG2 X3, X4 \
	VPSHUFD $0x0e, X0, X0 \
	SHA256RNDS2 X0, X15, X14 \
	SHA256MSG1 X3, X6 \
	VPADDD shaK<>+80(SB), X4, X0 \
	SHA256RNDS2 X0, X14, X15 \
	VPALIGNR $0x04, X3, X4, X7 \
	VPADDD X7, X5, X5 \
	SHA256MSG2 X4, X5 \
	VPSHUFD $0x0e, X0, X0 \
	SHA256RNDS2 X0, X15, X14 \
	SHA256MSG1 X4, X3 \
	VPADDD shaK<>+96(SB), X5, X0 \
	SHA256RNDS2 X0, X14, X15 \
	VPALIGNR $0x04, X4, X5, X7 \
	VPADDD X7, X6, X6 \
	SHA256MSG2 X5, X6 \
	VPSHUFD $0x0e, X0, X0 \
	SHA256RNDS2 X0, X15, X14 \
	SHA256MSG1 X5, X4 \
	VPADDD shaK<>+112(SB), X6, X0 \
	SHA256RNDS2 X0, X14, X15 \
	VPALIGNR $0x04, X5, X6, X7 \
	VPADDD X7, X3, X3 \
	SHA256MSG2 X6, X3 \
	VPSHUFD $0x0e, X0, X0 \
	SHA256RNDS2 X0, X15, X14 \
	SHA256MSG1 X6, X5

// SHA_Q2: rounds 32 to 47.
#define SHA_Q2 \
	VPADDD shaK<>+128(SB), X3, X0 \
	SHA256RNDS2 X0, X14, X15 \
	VPALIGNR $0x04, X6, X3, X7 \
	VPADDD X7, X4, X4 \
	SHA256MSG2 X3, X4 \
	VPSHUFD $0x0e, X0, X0 \
	SHA256RNDS2 X0, X15, X14 \
	SHA256MSG1 X3, X6 \
	VPADDD shaK<>+144(SB), X4, X0 \
	SHA256RNDS2 X0, X14, X15 \
	VPALIGNR $0x04, X3, X4, X7 \
	VPADDD X7, X5, X5 \
	SHA256MSG2 X4, X5 \
	VPSHUFD $0x0e, X0, X0 \
	SHA256RNDS2 X0, X15, X14 \
	SHA256MSG1 X4, X3 \
	VPADDD shaK<>+160(SB), X5, X0 \
	SHA256RNDS2 X0, X14, X15 \
	VPALIGNR $0x04, X4, X5, X7 \
	VPADDD X7, X6, X6 \
	SHA256MSG2 X5, X6 \
	VPSHUFD $0x0e, X0, X0 \
	SHA256RNDS2 X0, X15, X14 \
	SHA256MSG1 X5, X4 \
	VPADDD shaK<>+176(SB), X6, X0 \
	SHA256RNDS2 X0, X14, X15 \
	VPALIGNR $0x04, X5, X6, X7 \
	VPADDD X7, X3, X3 \
	SHA256MSG2 X6, X3 \
	VPSHUFD $0x0e, X0, X0 \
	SHA256RNDS2 X0, X15, X14 \
	SHA256MSG1 X6, X5

// SHA_Q3: rounds 48 to 63.
#define SHA_Q3 \
	VPADDD shaK<>+192(SB), X3, X0 \
	SHA256RNDS2 X0, X14, X15 \
	VPALIGNR $0x04, X6, X3, X7 \
	VPADDD X7, X4, X4 \
	SHA256MSG2 X3, X4 \
	VPSHUFD $0x0e, X0, X0 \
	SHA256RNDS2 X0, X15, X14 \
	SHA256MSG1 X3, X6 \
	VPADDD shaK<>+208(SB), X4, X0 \
	SHA256RNDS2 X0, X14, X15 \
	VPALIGNR $0x04, X3, X4, X7 \
	VPADDD X7, X5, X5 \
	SHA256MSG2 X4, X5 \
	VPSHUFD $0x0e, X0, X0 \
	SHA256RNDS2 X0, X15, X14 \
	VPADDD shaK<>+224(SB), X5, X0 \
	SHA256RNDS2 X0, X14, X15 \
	VPALIGNR $0x04, X4, X5, X7 \
	VPADDD X7, X6, X6 \
	SHA256MSG2 X5, X6 \
	VPSHUFD $0x0e, X0, X0 \
	SHA256RNDS2 X0, X15, X14 \
	VPADDD shaK<>+240(SB), X6, X0 \
	SHA256RNDS2 X0, X14, X15 \
	VPSHUFD $0x0e, X0, X0 \
	SHA256RNDS2 X0, X15, X14

// SHA_BLOCK hashes the 64 bytes at p (a register) into the state in
// X14 and X15; it clobbers X0 to X7.
#define SHA_BLOCK(p) \
	VMOVDQA X14, X1 \
	VMOVDQA X15, X2 \
	SHA_Q0(p) \
	SHA_Q1 \
	SHA_Q2 \
	SHA_Q3 \
	VPADDD X1, X14, X14 \
	VPADDD X2, X15, X15
