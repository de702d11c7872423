//go:build !amd64

package xmlscan

// No assembly for this architecture: the byte and word loops do all.
const haveNameSIMD, haveWideSIMD = false, false

func nameRun(src *byte, n int) (k int, flags uint32) { panic("xmlscan: nameRun without assembly") }

func charsRun(src *byte, n int) int { panic("xmlscan: charsRun without assembly") }

func valueRun(src *byte, n int, quote byte) (k int, flags uint32) {
	panic("xmlscan: valueRun without assembly")
}
