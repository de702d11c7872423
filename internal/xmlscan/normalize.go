package xmlscan

import (
	"bytes"
	"encoding/binary"
	"unicode/utf8"
)

// This file holds reference parsing (XML 1.0 §4.1) and the value
// normalizations engines need: attribute-value normalization (§3.3.3) and
// line-end normalization (§2.11). encoding/xml does neither of the former
// correctly (security.md §0.3: it keeps a literal TAB/LF in an attribute
// where libxml2 and expat give a space), so an engine that digests attribute
// values must take them from here, not from etree.
//
// Every helper returns its input unchanged, without copying, when nothing
// needs normalizing; otherwise it writes the result to buf[:0] (growing it
// if needed) and returns that.

// isChar reports whether r matches the Char production (XML 1.0 §2.2).
func isChar(r rune) bool {
	switch {
	case r < 0x20:
		return r == '\t' || r == '\n' || r == '\r'
	case r <= 0xD7FF:
		return true
	case r < 0xE000:
		return false // surrogates
	case r <= 0xFFFD:
		return true
	default:
		return r >= 0x10000 && r <= 0x10FFFF
	}
}

// parseRef parses the reference at s[0] == '&' and returns the character
// it stands for and its length in bytes. Only the five predefined entities
// (§4.6) and character references (§4.1 [66]) exist: without a DTD any
// other entity name violates WFC: Entity Declared. A character reference
// must denote a Char (WFC: Legal Character), so &#0; and surrogates fail.
func parseRef(s []byte) (r rune, n int, k Kind) {
	if len(s) > 1 && s[1] == '#' {
		return parseCharRef(s)
	}
	semi := bytes.IndexByte(s[:min(len(s), 6)], ';')
	if semi < 0 {
		return 0, 0, KindBadReference
	}
	switch string(s[1:semi]) {
	case "lt":
		r = '<'
	case "gt":
		r = '>'
	case "amp":
		r = '&'
	case "apos":
		r = '\''
	case "quot":
		r = '"'
	default:
		return 0, 0, KindBadReference
	}
	return r, semi + 1, 0
}

// parseCharRef parses "&#[0-9]+;" or "&#x[0-9a-fA-F]+;" (lowercase x only,
// XML 1.0 [66]).
func parseCharRef(s []byte) (rune, int, Kind) {
	i, base := 2, rune(10)
	if i < len(s) && s[i] == 'x' {
		i, base = 3, 16
	}
	start := i
	var v rune
	for ; i < len(s); i++ {
		d := digitVal(s[i])
		if d >= base {
			break
		}
		if v <= utf8.MaxRune { // saturate: more digits only make it larger
			v = v*base + d
		}
	}
	if i == start || i >= len(s) || s[i] != ';' {
		return 0, 0, KindBadReference
	}
	if !isChar(v) {
		return 0, 0, KindIllegalChar
	}
	return v, i + 1, 0
}

func digitVal(c byte) rune {
	switch {
	case '0' <= c && c <= '9':
		return rune(c - '0')
	case 'a' <= c && c <= 'f':
		return rune(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return rune(c-'A') + 10
	}
	return 99
}

// checkRefs validates every '&' in s (text or an attribute value); base is
// the offset of s in the document, for the error.
func checkRefs(s []byte, base int) *Error {
	for i := bytes.IndexByte(s, '&'); i >= 0; {
		_, n, k := parseRef(s[i:])
		if k != 0 {
			return newError(k, base+i, "bad character or entity reference")
		}
		i += n
		j := bytes.IndexByte(s[i:], '&')
		if j < 0 {
			break
		}
		i += j
	}
	return nil
}

// attrSpecial classifies bytes of attribute values: 1 '<', 2 '&',
// 4 TAB/LF/CR (changed by normalization).
var attrSpecial = [256]uint8{'<': 1, '&': 2, '\t': 4, '\n': 4, '\r': 4}

// attrClass ORs the attrSpecial classes of the bytes of v. Eight bytes at
// a time are first tested for any that can have a class (mayBeSpecial):
// most attribute values are namespace and algorithm URIs, ids and numbers,
// with none, and the byte loop was a tenth of the gate's time (issue 14).
func attrClass(v []byte) uint8 {
	var acc uint8
	i := 0
	for ; i+8 <= len(v); i += 8 {
		if mayBeSpecial(binary.LittleEndian.Uint64(v[i:])) {
			for _, c := range v[i : i+8] {
				acc |= attrSpecial[c]
			}
		}
	}
	if i < len(v) && len(v) >= 8 {
		// The tail as the last eight bytes, overlapping the words
		// already seen (an OR does not mind): a word test instead of a
		// byte loop for the 1-7 bytes left (issue 14).
		i = len(v) - 8
		if !mayBeSpecial(binary.LittleEndian.Uint64(v[i:])) {
			return acc
		}
	}
	for _, c := range v[i:] {
		acc |= attrSpecial[c]
	}
	return acc
}

// mayBeSpecial reports whether one of the eight bytes of w is below 0x20
// (TAB, LF, CR: the gate refuses the other control characters), '<' or
// '&'. (x - 0x0101...*n) &^ x & 0x8080... is non-zero iff a byte of x is
// below n, for n <= 0x80; x ^ c*0x0101... has a zero byte where x has c.
func mayBeSpecial(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	lt, amp := w^(ones*'<'), w^(ones*'&')
	return ((w-ones*0x20)&^w|(lt-ones)&^lt|(amp-ones)&^amp)&highs != 0
}

// NormalizeAttrValue returns the normalized value of a raw attribute value
// (the bytes between the quotes), per XML 1.0 §3.3.3 for CDATA-typed
// attributes (the only type without a DTD): line ends are normalized first
// (§2.11: CRLF and CR become LF), then each literal TAB, LF or CR becomes a
// space and each reference is replaced by its character. A character
// reference to a white space character is kept as that character (this is
// how &#xA; survives in canonical XML). No collapsing happens.
func NormalizeAttrValue(raw, buf []byte) ([]byte, error) {
	c := attrClass(raw)
	if c&1 != 0 {
		return nil, newError(KindLtInAttr, bytes.IndexByte(raw, '<'), "'<' in attribute value")
	}
	if c == 0 {
		return raw, nil
	}
	out := buf[:0]
	for i := 0; i < len(raw); {
		switch b := raw[i]; b {
		case '&':
			r, n, k := parseRef(raw[i:])
			if k != 0 {
				return nil, newError(k, i, "bad character or entity reference")
			}
			out = utf8.AppendRune(out, r)
			i += n
		case '\r':
			out = append(out, ' ')
			i++
			if i < len(raw) && raw[i] == '\n' {
				i++
			}
		case '\t', '\n':
			out = append(out, ' ')
			i++
		default:
			out = append(out, b)
			i++
		}
	}
	return out, nil
}

// NormalizeText returns character data with references replaced by their
// characters and line ends normalized (XML 1.0 §2.11, §4.6): the text value
// an XML processor reports. A character reference &#xD; stays a CR.
func NormalizeText(raw, buf []byte) ([]byte, error) {
	if bytes.IndexByte(raw, '&') < 0 && bytes.IndexByte(raw, '\r') < 0 {
		return raw, nil
	}
	return appendText(buf[:0], raw)
}

// NormalizeLineEnds returns raw with CRLF and lone CR replaced by LF (XML
// 1.0 §2.11), e.g. for the content of a CDATA section.
func NormalizeLineEnds(raw, buf []byte) []byte {
	if bytes.IndexByte(raw, '\r') < 0 {
		return raw
	}
	return appendLineEnds(buf[:0], raw)
}

// appendText appends the text value of raw character data to dst.
func appendText(dst, raw []byte) ([]byte, error) {
	for i := 0; ; {
		j := bytes.IndexAny(raw[i:], "&\r")
		if j < 0 {
			return append(dst, raw[i:]...), nil
		}
		dst = append(dst, raw[i:i+j]...)
		i += j
		if raw[i] == '\r' {
			dst = append(dst, '\n')
			i++
			if i < len(raw) && raw[i] == '\n' {
				i++
			}
			continue
		}
		r, n, k := parseRef(raw[i:])
		if k != 0 {
			return nil, newError(k, i, "bad character or entity reference")
		}
		dst = utf8.AppendRune(dst, r)
		i += n
	}
}

// appendLineEnds appends raw to dst with line ends normalized.
func appendLineEnds(dst, raw []byte) []byte {
	for {
		j := bytes.IndexByte(raw, '\r')
		if j < 0 {
			return append(dst, raw...)
		}
		dst = append(dst, raw[:j]...)
		dst = append(dst, '\n')
		raw = raw[j+1:]
		if len(raw) > 0 && raw[0] == '\n' {
			raw = raw[1:]
		}
	}
}

// indexByteOr returns the index of c in s, or len(s).
func indexByteOr(s []byte, c byte) int {
	if i := bytes.IndexByte(s, c); i >= 0 {
		return i
	}
	return len(s)
}

// indexOr returns the index of sep in s, or len(s).
func indexOr(s []byte, sep string) int {
	if i := bytes.Index(s, []byte(sep)); i >= 0 {
		return i
	}
	return len(s)
}
