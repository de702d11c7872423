//go:build !amd64

package template

// scanBlocks is scanBlocksGeneric: no assembly for this architecture.
func scanBlocks(src []byte, t, a []uint64) { scanBlocksGeneric(src, t, a) }
