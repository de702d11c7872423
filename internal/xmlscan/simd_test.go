package xmlscan

import (
	"bytes"
	"testing"
	"unicode/utf8"
)

// validateCharsRef is validateChars rune by rune: the reference the word
// and SIMD steps are held to.
func validateCharsRef(data []byte, base int) (hasCR bool, err *Error) {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return hasCR, newError(KindInvalidUTF8, base+i, "invalid UTF-8 sequence")
		case r == '\r':
			hasCR = true
		case r < 0x20 && r != '\t' && r != '\n':
			return hasCR, newError(KindIllegalChar, base+i, "control character")
		case r == 0xFFFE || r == 0xFFFF:
			return hasCR, newError(KindIllegalChar, base+i, "U+FFFE or U+FFFF")
		}
		i += size
	}
	return hasCR, nil
}

// valueEndRef is valueEnd byte by byte.
func valueEndRef(data []byte, vs int, quote byte) (int, uint8) {
	k := bytes.IndexByte(data[vs:], quote)
	if k < 0 {
		return -1, 0
	}
	var acc uint8
	for _, c := range data[vs : vs+k] {
		acc |= attrSpecial[c]
	}
	return k, acc
}

// lengths are the input lengths the every-offset tests try: all up to
// 40 (a 32-byte block and the word loops' tail), then around the second
// and third block boundaries.
var lengths = func() []int {
	var out []int
	for n := 0; n <= 40; n++ {
		out = append(out, n)
	}
	return append(out, 62, 63, 64, 65, 66, 95, 96, 97, 100)
}()

// inserts are the bytes that stop a plain run or carry a class: every
// byte value, and multi-byte sequences valid and not.
func inserts() [][]byte {
	var out [][]byte
	for c := 0; c < 256; c++ {
		out = append(out, []byte{byte(c)})
	}
	return append(out, []byte("\xc3\xa9"), []byte("\xef\xbf\xbe"), []byte("\xef\xbf\xbf"), []byte("\xf0\x90\x80\x80"),
		[]byte("\xed\xa0\x80"), []byte("\xc3"), []byte("\r\n"), []byte("&amp;"))
}

// TestCharsRunEveryOffset puts every insert at every offset of inputs of
// the lengths up to 100 (three 32-byte blocks and a tail), with a second
// stop byte after it, and holds validateChars (charsRun's 32-byte steps,
// then the word loops) to validateCharsRef (issue 14).
func TestCharsRunEveryOffset(t *testing.T) {
	for _, ins := range inserts() {
		for _, n := range lengths {
			for k := 0; k <= n; k++ {
				v := append(append(bytes.Repeat([]byte("a"), k), ins...), bytes.Repeat([]byte("b"), n-k)...)
				for _, w := range [][]byte{v, append(append([]byte(nil), v...), '\t', 'x')} {
					cr, err := validateChars(w, 7)
					wantCR, wantErr := validateCharsRef(w, 7)
					if (err == nil) != (wantErr == nil) || err != nil && (err.Kind != wantErr.Kind || err.Offset != wantErr.Offset) || err == nil && cr != wantCR {
						t.Fatalf("validateChars(%q) = %v, %v; rune by rune %v, %v", w, cr, err, wantCR, wantErr)
					}
				}
			}
		}
	}
}

// TestValueRunEveryOffset puts every insert at every offset of attribute
// values of the lengths up to 100, closed by either quote or by none,
// and holds valueEnd (valueRun's 32-byte steps, then IndexByte and
// attrClass) to valueEndRef: the same end and the same classes (issue 14).
func TestValueRunEveryOffset(t *testing.T) {
	for _, ins := range inserts() {
		for _, n := range lengths {
			for k := 0; k <= n; k++ {
				v := append(append(bytes.Repeat([]byte("a"), k), ins...), bytes.Repeat([]byte("b"), n-k)...)
				for _, end := range []string{`"`, `'`, "", `"x<&` + "\t'", `'` + `"&<`} {
					w := append(append([]byte(`x="`), v...), end...)
					for _, quote := range []byte{'"', '\''} {
						gotK, gotC := valueEnd(w, 3, quote)
						wantK, wantC := valueEndRef(w, 3, quote)
						if gotK != wantK || gotC != wantC {
							t.Fatalf("valueEnd(%q, %q) = %d, %d; byte by byte %d, %d", w, quote, gotK, gotC, wantK, wantC)
						}
					}
				}
			}
		}
	}
}

// FuzzChars holds validateChars to validateCharsRef and valueEnd to
// valueEndRef on any input, valueEnd from every offset.
func FuzzChars(f *testing.F) {
	f.Add([]byte(`<a x="http://www.w3.org/2001/10/xml-exc-c14n#WithComments&amp;">` + "\r\n\xc3\xa9</a>"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cr, err := validateChars(data, 0)
		wantCR, wantErr := validateCharsRef(data, 0)
		if (err == nil) != (wantErr == nil) || err != nil && (err.Kind != wantErr.Kind || err.Offset != wantErr.Offset) || err == nil && cr != wantCR {
			t.Fatalf("validateChars(%q) = %v, %v; rune by rune %v, %v", data, cr, err, wantCR, wantErr)
		}
		for vs := 0; vs <= len(data); vs++ {
			for _, quote := range []byte{'"', '\''} {
				gotK, gotC := valueEnd(data, vs, quote)
				wantK, wantC := valueEndRef(data, vs, quote)
				if gotK != wantK || gotC != wantC {
					t.Fatalf("valueEnd(%q, %d, %q) = %d, %d; byte by byte %d, %d", data, vs, quote, gotK, gotC, wantK, wantC)
				}
			}
		}
	})
}
