package xmlscan

import (
	"bytes"
	"testing"
)

// TestWordLoopsEveryOffset puts a byte that stops the word loops (a
// control character, CR, TAB, '<', '&', a non-ASCII letter, invalid
// UTF-8) at every offset of inputs of every length up to 40: the
// sixteen- and eight-byte steps of validateChars and the overlapping tail
// word of attrClass must see it wherever it falls (issue 14).
func TestWordLoopsEveryOffset(t *testing.T) {
	for _, c := range []struct {
		ins          []byte
		charsErr     Kind // 0: valid
		cr           bool
		attrSpecials uint8
	}{
		{[]byte{0x01}, KindIllegalChar, false, 0},
		{[]byte{'\r'}, 0, true, 4},
		{[]byte{'\t'}, 0, false, 4},
		{[]byte{'<'}, 0, false, 1},
		{[]byte{'&'}, 0, false, 2},
		{[]byte("\xc3\xa9"), 0, false, 0},
		{[]byte{0xff}, KindInvalidUTF8, false, 0},
	} {
		for n := 0; n <= 40; n++ {
			for k := 0; k <= n; k++ {
				v := append(append(bytes.Repeat([]byte("a"), k), c.ins...), bytes.Repeat([]byte("b"), n-k)...)
				cr, err := validateChars(v, 0)
				switch {
				case c.charsErr == 0 && (err != nil || cr != c.cr):
					t.Fatalf("validateChars(%q) = %v, %v, want %v, nil", v, cr, err, c.cr)
				case c.charsErr != 0 && (err == nil || err.Kind != c.charsErr || err.Offset != k):
					t.Fatalf("validateChars(%q) = %v, want %v at %d", v, err, c.charsErr, k)
				}
				if got := attrClass(v); got != c.attrSpecials {
					t.Fatalf("attrClass(%q) = %d, want %d", v, got, c.attrSpecials)
				}
			}
		}
	}
}
