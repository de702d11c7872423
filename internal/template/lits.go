package template

// lits are a template's literal bytes in two regions: c, the distinct
// constant fragments end to end, and x, the canonical literals found nowhere in
// them. An offset with xBit set is in x: x's offsets do not move with the
// length of the fragments, so templates whose payloads differ in length
// still share their SignedInfo's canonical form. Each region's first bytes may
// alias another template's (templates of one partner repeat their
// Security header and its canonical forms byte for byte); a fragment or a
// literal piece never straddles a region's shared and own parts.
type lits struct{ c, x region }

type region struct{ head, own []byte }

func (r *region) at(off, n uint32) []byte {
	if h := uint32(len(r.head)); off < h {
		return r.head[off : off+n : off+n]
	}
	off -= uint32(len(r.head))
	return r.own[off : off+n : off+n]
}

// whole is the region's bytes when they are in one buffer, or its shared
// head: what another template may alias a prefix of.
func (r *region) whole() []byte {
	if len(r.head) > 0 {
		return r.head
	}
	return r.own
}

// at returns the n literal bytes at off. One region.at call site, so that
// at itself inlines into lit and frag: a 4 KiB hit takes some forty
// literals and fragments (issue 14).
func (l *lits) at(off, n uint32) []byte {
	r := &l.c
	if off&xBit != 0 {
		r, off = &l.x, off&^xBit
	}
	return r.at(off, n)
}

// xBit marks an offset in the extra literals; learn refuses messages of
// 2 GiB, far above any gate limit.
const xBit = 1 << 31

// alias makes r's first n bytes an alias of src's.
func (r *region) alias(src []byte, n int) {
	if n == 0 {
		return
	}
	r.own = append([]byte(nil), r.own[n:]...)
	r.head = src[:n:n]
}

// shared reports whether the n bytes at off lie in an aliased head: a
// template sharing that head has the same bytes at the same offset.
func (l *lits) shared(off, n uint32) bool {
	if off&xBit != 0 {
		return off&^xBit+n <= uint32(len(l.x.head))
	}
	return off+n <= uint32(len(l.c.head))
}
