//go:build !amd64

package template

// wideNone is false: no vector check for this architecture.
const wideNone = false

// noneWide is the vector check's computation in Go, unused here.
func noneWide(v []byte, l *nibbleLUT) bool {
	for _, b := range v {
		if l.lo[b&15]&l.hi[b>>4] == 0 {
			return false
		}
	}
	return true
}
