package xmlscan

import (
	"bytes"
	"encoding/binary"
	"unicode"
	"unicode/utf8"
)

// validateChars checks, in one pass before any markup is looked at, that
// data is well-formed UTF-8 consisting only of XML 1.0 Chars (§2.2:
// #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]).
// The structural scan can then skip over text with bytes.IndexByte without
// looking at every byte. It also reports whether a CR occurs, so line-end
// normalization (§2.11) can be skipped for documents without one.
//
// Eight bytes are checked at a time: w|(w-0x20..20) has a high bit set in
// some byte iff some byte is >= 0x80 or < 0x20 (a borrow can only start at a
// byte below 0x20, which is itself detected).
func validateChars(data []byte, base int) (hasCR bool, err *Error) {
	const lows, highs = 0x2020202020202020, 0x8080808080808080
	i, n := 0, len(data)
	for i < n {
		// The steps below only pass plain bytes (0x20-0x7f): on any
		// other byte each would stop at once, at the cost of a call and
		// two word tests per character in text that is mostly
		// multi-byte characters (CJK text took a fifth more
		// instructions with charsRun than without).
		if c := data[i]; c-0x20 < 0x60 {
			// 32 bytes per step where the CPU allows (charsRun): the
			// loop was the gate's largest single cost on fresh messages
			// after names (issue 14).
			if haveWideSIMD && n-i >= 32 {
				i += charsRun(&data[i], n-i)
			}
			// Sixteen bytes per step while both words are plain: a fresh
			// message is mostly such runs (issue 14: this loop was a tenth
			// of the gate's instructions on fresh shapes). The eight-byte
			// loop then finds the word that stopped it.
			for i+16 <= n {
				b := data[i : i+16 : i+16]
				w0, w1 := binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])
				if (w0|(w0-lows)|w1|(w1-lows))&highs != 0 {
					break
				}
				i += 16
			}
			for i+8 <= n {
				w := binary.LittleEndian.Uint64(data[i:])
				if (w|(w-lows))&highs != 0 {
					break
				}
				i += 8
			}
		}
		if i >= n {
			break
		}
		c := data[i]
		if c >= 0x20 && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < 0x20 {
			switch c {
			case '\t', '\n':
			case '\r':
				hasCR = true
			default:
				return hasCR, newError(KindIllegalChar, base+i, "control character")
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 {
			return hasCR, newError(KindInvalidUTF8, base+i, "invalid UTF-8 sequence")
		}
		if r == 0xFFFE || r == 0xFFFF { // the only non-Chars that are valid UTF-8
			return hasCR, newError(KindIllegalChar, base+i, "U+FFFE or U+FFFF")
		}
		i += size
	}
	return hasCR, nil
}

// isSpace reports the S production (XML 1.0 §2.3 [3]).
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// skipSpace returns the offset of the first non-S byte at or after p.
func skipSpace(data []byte, p int) int {
	// Most calls stop at once on a byte above ' ', which no S is: one
	// comparison instead of isSpace's four (issue 14).
	for p < len(data) && data[p] <= ' ' && isSpace(data[p]) {
		p++
	}
	return p
}

// allSpace reports whether s consists of S only.
func allSpace(s []byte) bool {
	for _, c := range s {
		if !isSpace(c) {
			return false
		}
	}
	return true
}

// Name byte classes. Bytes >= 0x80 continue a name (as in encoding/xml's
// readName) and are checked rune by rune afterwards.
const (
	nameCont  = 1 // may continue a name
	nameStart = 2 // ASCII NameStartChar
	nameHigh  = 4 // non-ASCII: check the rune
)

var nameTab = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		switch {
		case c >= 0x80:
			t[c] = nameCont | nameHigh
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', c == '_', c == ':':
			t[c] = nameCont | nameStart
		case '0' <= c && c <= '9', c == '-', c == '.':
			t[c] = nameCont
		}
	}
	return t
}()

// Flags of nameRun.
const (
	nameRunHigh = 1 // a name byte is non-ASCII
	nameRunStop = 2 // the run ended before the last sixteen bytes
)

// scanName returns the end of the run of name bytes starting at p, and
// whether it contains non-ASCII bytes. Sixteen bytes are classified at a
// time where the CPU allows (nameRun): names were the largest share of
// the gate's instructions on fresh messages, about six a byte byte by
// byte (issue 14). TestNameRunEveryOffset and FuzzScanName hold it to
// scanNameGeneric.
func scanName(data []byte, p int) (end int, high bool) {
	if haveNameSIMD && len(data)-p >= 16 {
		k, f := nameRun(&data[p], len(data)-p)
		p += k
		if f&nameRunStop != 0 {
			return p, f&nameRunHigh != 0
		}
		end, high = scanNameGeneric(data, p)
		return end, high || f&nameRunHigh != 0
	}
	return scanNameGeneric(data, p)
}

// scanNameGeneric is scanName byte by byte.
func scanNameGeneric(data []byte, p int) (end int, high bool) {
	var acc uint8
	for p < len(data) {
		t := nameTab[data[p]]
		if t&nameCont == 0 {
			break
		}
		acc |= t
		p++
	}
	return p, acc&nameHigh != 0
}

// checkQName validates name as a QName (Namespaces in XML 1.0 §4 [7]:
// PrefixedName | UnprefixedName, both parts NCNames, so at most one colon,
// neither first nor last) and returns the colon's index, or -1.
func checkQName(name []byte, high bool) (colon int, ok bool) {
	if len(name) == 0 {
		return -1, false
	}
	colon = bytes.IndexByte(name, ':')
	if colon == 0 || colon == len(name)-1 {
		return -1, false
	}
	if colon > 0 && bytes.IndexByte(name[colon+1:], ':') >= 0 {
		return -1, false
	}
	if !high {
		if nameTab[name[0]]&nameStart == 0 {
			return -1, false
		}
		if colon > 0 && nameTab[name[colon+1]]&nameStart == 0 {
			return -1, false
		}
		return colon, true
	}
	if colon < 0 {
		return -1, checkNCNameRunes(name)
	}
	return colon, checkNCNameRunes(name[:colon]) && checkNCNameRunes(name[colon+1:])
}

// checkNCNameRunes validates a name part containing non-ASCII characters.
func checkNCNameRunes(s []byte) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			return false
		}
		if !isNameRune(r, i == 0) {
			return false
		}
		i += size
	}
	return true
}

// isNameRune reports whether r may start (first) or continue a name: it
// must be allowed both by XML 1.0 fifth edition (§2.3 [4], [4a]) and by
// encoding/xml's fourth-edition tables (see nametables.go).
func isNameRune(r rune, first bool) bool {
	if r < utf8.RuneSelf {
		t := nameTab[r]
		if first {
			return t&nameStart != 0
		}
		return t&nameCont != 0
	}
	if first {
		return isXML5NameStart(r) && unicode.Is(goNameStart, r)
	}
	return (isXML5NameStart(r) || isXML5NameCharOnly(r)) &&
		(unicode.Is(goNameStart, r) || unicode.Is(goNameChar, r))
}

// isXML5NameStart is NameStartChar for non-ASCII r (XML 1.0 §2.3 [4]).
func isXML5NameStart(r rune) bool {
	switch {
	case r >= 0xC0 && r <= 0xD6, r >= 0xD8 && r <= 0xF6, r >= 0xF8 && r <= 0x2FF,
		r >= 0x370 && r <= 0x37D, r >= 0x37F && r <= 0x1FFF, r >= 0x200C && r <= 0x200D,
		r >= 0x2070 && r <= 0x218F, r >= 0x2C00 && r <= 0x2FEF, r >= 0x3001 && r <= 0xD7FF,
		r >= 0xF900 && r <= 0xFDCF, r >= 0xFDF0 && r <= 0xFFFD, r >= 0x10000 && r <= 0xEFFFF:
		return true
	}
	return false
}

// isXML5NameCharOnly is NameChar minus NameStartChar for non-ASCII r
// (XML 1.0 §2.3 [4a]).
func isXML5NameCharOnly(r rune) bool {
	return r == 0xB7 || r >= 0x300 && r <= 0x36F || r >= 0x203F && r <= 0x2040
}

// AllSpace reports whether s consists of XML white space (S) only.
func AllSpace(s []byte) bool { return allSpace(s) }
