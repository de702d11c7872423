package template

import "math/bits"

// The structural scan of the fast body (issue 14): for each 64-byte block
// of the Body content, two bitmasks say where a byte needs a closer look,
// one for character data and one for a double-quoted attribute value.
// The walk then jumps from stop to stop with bits.TrailingZeros64 instead
// of looking at every byte: on markup-dense payloads most bytes are names
// and values that only need to be skipped. The masks are computed for a
// window of scanWin blocks at a time (AVX2 on amd64, scanBlocksGeneric
// elsewhere), so they stay in the L1 cache whatever the Body's size.

const (
	// stopText: a byte that ends a run of character data that is
	// canonical as it is: '<', and what C14N 1.0 §2.3 escapes or the
	// gate refuses there or the walk checks ('&' a reference, '>' maybe
	// "]]>", CR, control characters, non-ASCII). Tab and LF are plain.
	stopText = 1 << iota
	// stopAttr: a byte that ends a double-quoted attribute value that
	// is canonical as it is: '"', '&', '<', every byte below 0x20
	// (normalized to a space or refused) and non-ASCII.
	stopAttr
)

// stopClass is the definition of both masks, byte by byte; the AVX2 scan
// is tested against it (TestScanBlocks, FuzzScanBlocks).
var stopClass = func() (t [256]uint8) {
	for i := range t {
		if i < 0x20 && i != '\t' && i != '\n' || i >= 0x80 || i == '<' || i == '&' || i == '>' {
			t[i] |= stopText
		}
		if i < 0x20 || i >= 0x80 || i == '<' || i == '&' || i == '"' {
			t[i] |= stopAttr
		}
	}
	return t
}()

// scanBlocksGeneric sets, for each 64-byte block k of src, bit i of t[k]
// and a[k] when byte i of the block is a stopText and a stopAttr byte.
func scanBlocksGeneric(src []byte, t, a []uint64) {
	for k := range t {
		blk := src[k*64 : k*64+64]
		var tm, am uint64
		for i, c := range blk {
			s := uint64(stopClass[c])
			tm |= (s & 1) << i
			am |= (s >> 1 & 1) << i
		}
		t[k], a[k] = tm, am
	}
}

const scanWin = 64 // blocks per window: 4 KiB of content, 1 KiB of masks

// refill computes the masks of the window starting at block b of the
// content; false when b is past the end. The last block is padded with
// '<', a stop in both masks, so that a search never runs past the end.
func (fb *fastBody) refill(b int) bool {
	if b < 0 || b >= fb.nblk {
		return false
	}
	if fb.win == nil {
		fb.win = new([2 * scanWin]uint64)
	}
	n := min(scanWin, fb.nblk-b)
	full := n
	tail := (fb.end - fb.base) & 63
	if tail != 0 && b+n == fb.nblk {
		full--
	}
	from := fb.base + b*64
	tm, am := fb.win[:scanWin], fb.win[scanWin:]
	scanBlocks(fb.data[from:from+full*64], tm[:full], am[:full])
	if full < n {
		var pad [64]byte
		k := copy(pad[:], fb.data[from+full*64:fb.end])
		for i := k; i < len(pad); i++ {
			pad[i] = '<'
		}
		scanBlocks(pad[:], tm[full:n], am[full:n])
	}
	fb.wb, fb.wn = b, n
	fb.lo, fb.wlen = fb.base+b*64, n*64
	return true
}

// nextAttr is the offset of the first stopAttr byte at or after p, or
// the end of the content.
func (fb *fastBody) nextAttr(p int) int {
	if q, ok := fb.peek(p, scanWin); ok {
		return q
	}
	return fb.next(p, scanWin)
}

// peek is next within p's block of the window, small enough to inline
// where nextAttr is not: false, look further with next. which: 0 for
// stopText, scanWin for stopAttr.
func (fb *fastBody) peek(p, which int) (int, bool) {
	if k := uint(p - fb.lo); k < uint(fb.wlen) {
		if m := fb.win[which+int(k>>6&(scanWin-1))] >> (k & 63); m != 0 {
			return p + bits.TrailingZeros64(m), true
		}
	}
	return 0, false
}

// next is the offset of the first stopText (which 0) or stopAttr (which
// scanWin) byte at or after p, or the end of the content.
func (fb *fastBody) next(p, which int) int {
	for {
		off := p - fb.base
		b := off>>6 - fb.wb
		if uint(b) >= uint(fb.wn) {
			if !fb.refill(off >> 6) {
				return fb.end
			}
			b = 0
		}
		if m := fb.win[which+b] >> uint(off&63); m != 0 {
			return p + bits.TrailingZeros64(m)
		}
		p += 64 - off&63
	}
}
