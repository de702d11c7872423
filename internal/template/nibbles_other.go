//go:build !amd64

package template

// wideNone is false: no vector check for this architecture.
const wideNone = false

func noneWide(v []byte, l *nibbleLUT) bool { return noneNibbles(v, l) }
