//go:build !amd64

package xmlscan

const haveNameSIMD = false

// nameRun is never called without assembly (haveNameSIMD is false).
func nameRun(src *byte, n int) (k int, flags uint32) { panic("xmlscan: nameRun without assembly") }
