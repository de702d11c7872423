//go:build !amd64

package xmlscan

// withoutSIMD runs f: without assembly the byte and word loops always
// decide.
func withoutSIMD(f func()) { f() }

func simdOn() bool { return false }
