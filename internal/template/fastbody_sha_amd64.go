package template

// haveSHANI: the CPU has the SHA extensions, and AVX2 (the fused kernel
// needs both; SSSE3 and SSE4.1, which SHA-NI code also uses, come with
// AVX2).
var haveSHANI = haveAVX2 && cpuSHA()

// cpuSHA reports CPUID.(EAX=7,ECX=0):EBX.SHA[bit 29] (fastbody_sha_amd64.s).
func cpuSHA() bool

// shaNIBlocks hashes blocks 64-byte blocks at p into s (shaNI's layout)
// with the SHA extensions (fastbody_sha_amd64.s).
//
//go:noescape
func shaNIBlocks(s *[8]uint32, p *byte, blocks int)
