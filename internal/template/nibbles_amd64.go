package template

// wideNone: none takes the vector check for long values (AVX2).
var wideNone = haveAVX2

// noneAVX2 is the nibble check (nibbles.go) of n >= 32 bytes at p
// (nibbles_amd64.s).
//
//go:noescape
func noneAVX2(p *byte, n int, l *nibbleLUT) bool

// noneWide is the nibble check of len(v) >= 32 bytes.
func noneWide(v []byte, l *nibbleLUT) bool {
	_ = v[31]
	return noneAVX2(&v[0], len(v), l)
}
