//go:build !amd64

package template

// scanBlocks is scanBlocksGeneric: no assembly for this architecture.
func scanBlocks(src []byte, t, a []uint64) { scanBlocksGeneric(src, t, a) }

// run is sibKern.runGeneric: no assembly for this architecture (kh is
// never hashed into).
func (k *sibKern) run(data []byte, q, end int, out []byte, oo, max, maxAttr, maxText int, emit bool, kh *kernHash) (sibs, in, o int) {
	return k.runGeneric(data, q, end, out, oo, max, maxAttr, maxText, emit)
}
