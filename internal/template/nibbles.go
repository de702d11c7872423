package template

// A byte set whose bytes, split into high and low nibble, form at most
// eight distinct rows (the sixteen low nibbles admitted after each high
// nibble) is checked 32 bytes at a time with two table lookups per byte
// (VPSHUFB): each distinct row gets a bit, hi[h] is the bit of row h (0
// when the row admits nothing) and lo[l] has the bits of the rows that
// admit l, so byte h<<4|l is admitted exactly when hi[h]&lo[l] != 0. Every
// slot class's set is of that form (base64: five rows); a 4 KiB hit checks
// about 1.8 KB of base64 (the token's certificate, the SignatureValue) on
// every match (issue 14).

// byteSet is a set of bytes a slot class refuses: a table for short values
// and, when the set has that form, its nibble tables.
type byteSet struct {
	not  [256]byte  // 1 for a refused byte
	wide *nibbleLUT // nil: not of the nibble form
}

// nibbleLUT holds the two nibble tables, each repeated for both 128-bit
// lanes of a 256-bit register (the layout nibbles_amd64.s loads).
type nibbleLUT struct {
	lo, hi [32]byte
}

func newByteSet(not [256]byte) *byteSet {
	return &byteSet{not: not, wide: nibblesOf(&not)}
}

// nibblesOf returns the nibble tables of the set not refuses, nil when it
// has more than eight distinct non-empty rows.
func nibblesOf(not *[256]byte) *nibbleLUT {
	var rows [16]uint16 // the low nibbles admitted after high nibble h
	for b := range 256 {
		if not[b] == 0 {
			rows[b>>4] |= 1 << (b & 15)
		}
	}
	var bits []uint16 // the distinct non-empty rows; row bits[i] is bit i
	l := &nibbleLUT{}
	for h, row := range rows {
		if row == 0 {
			continue
		}
		i := 0
		for i < len(bits) && bits[i] != row {
			i++
		}
		if i == len(bits) {
			if i == 8 {
				return nil
			}
			bits = append(bits, row)
		}
		l.hi[h] |= 1 << i
	}
	for i, row := range bits {
		for n := range 16 {
			if row&(1<<n) != 0 {
				l.lo[n] |= 1 << i
			}
		}
	}
	copy(l.lo[16:], l.lo[:16])
	copy(l.hi[16:], l.hi[:16])
	return l
}
