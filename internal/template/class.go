package template

import (
	"unicode/utf8"

	"github.com/wssgw/wssgw/internal/xmlscan"
)

// class is a slot's content class, checked on every match. No class but
// classBody admits markup, so a matched message has exactly the element
// structure of the message the template was learned from outside the Body
// content, and inside it too for a template without a body slot.
type class uint8

const (
	classText     class = iota + 1 // leaf element character data
	classAttr                      // payload attribute value
	classID                        // an Id attribute value
	classRef                       // "#id" of a Reference
	classBase64                    // base64 element content
	classDateTime                  // xsd:dateTime element content
	classCID                       // the href of an xop:Include in a package's root: "cid:..."
	// classBody is the whole content of the SOAP Body, any markup (issue
	// 14): the one class that admits markup. The matcher only finds its
	// end; the hit path gates the message and checks the Body's subtree
	// (generic.go) before anything is decided on it.
	classBody
	classSwA // the URI of an SwA ds:Reference in a package's root: "cid:..."
)

var classNames = [...]string{"", "text", "attr", "id", "ref", "base64", "dateTime", "cid", "body", "swa"}

func (c class) String() string { return classNames[c] }

// textual reports whether the slot is element content (it ends at '<').
func (c class) textual() bool {
	return c == classText || c == classBase64 || c == classDateTime
}

// limit kinds: which gate limit bounds a slot.
const (
	limitText   = iota // MaxTextLen
	limitBase64        // MaxBase64Len (ds, xenc, wsse element content)
	limitAttr          // MaxAttrValueLen
)

// check reports whether v belongs to class c within the gate limits.
func check(c class, v []byte, lim *xmlscan.Limits, limit uint8) bool {
	if c == classBody {
		return true // gated on the hit path (run.generic)
	}
	switch limit {
	case limitText:
		if len(v) > lim.MaxTextLen {
			return false
		}
	case limitBase64:
		if len(v) > lim.MaxBase64Len {
			return false
		}
	default:
		if len(v) > lim.MaxAttrValueLen {
			return false
		}
	}
	switch c {
	case classText:
		return charData(v, false)
	case classAttr:
		return charData(v, true)
	case classID:
		return len(v) > 0 && len(v) <= 256 && idChars(v)
	case classRef:
		return len(v) > 1 && len(v) <= 257 && v[0] == '#' && idChars(v[1:])
	case classBase64:
		return none(v, notBase64)
	case classCID, classSwA:
		// A cid: URL (wss.CIDFromURL resolves it when the template runs)
		// in printable ASCII without references or white space: its raw
		// bytes are its normalized value, as the DOM engine reads it.
		return len(v) > 4 && (v[0]|0x20) == 'c' && (v[1]|0x20) == 'i' && (v[2]|0x20) == 'd' && v[3] == ':' && none(v, notCID)
	case classDateTime:
		return len(v) <= 40 && none(v, notDateTime)
	}
	return false
}

// none reports whether no byte of v is in the set. Slots are checked on
// every match, and a certificate is a kilobyte of base64: values of 32
// bytes and more take the vector check (nibbles.go), shorter ones the
// table.
func none(v []byte, s *byteSet) bool {
	if len(v) >= 32 && s.wide != nil && wideNone {
		return noneWide(v, s.wide)
	}
	return noneTable(v, &s.not)
}

// noneTable is none by table lookups, without a branch per byte. Eight
// bytes a round into four accumulators: the loads are independent, which
// halves a 4 KiB hit's BST check (issue 14, 1.2 µs → 0.6 µs per 1.3 KB of
// base64).
func noneTable(v []byte, table *[256]byte) bool {
	var b0, b1, b2, b3 byte
	for len(v) >= 8 {
		b0 |= table[v[0]] | table[v[4]]
		b1 |= table[v[1]] | table[v[5]]
		b2 |= table[v[2]] | table[v[6]]
		b3 |= table[v[3]] | table[v[7]]
		v = v[8:]
	}
	for _, b := range v {
		b0 |= table[b]
	}
	return b0|b1|b2|b3 == 0
}

// except returns a table marking every byte but those in the sets.
func except(sets ...string) (t [256]byte) {
	for i := range t {
		t[i] = 1
	}
	for _, s := range sets {
		for i := 0; i < len(s); i++ {
			t[s[i]] = 0
		}
	}
	return t
}

var (
	notBase64 = newByteSet(except("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz", "0123456789", "+/= \t\r\n"))
	notCID    = newByteSet(func() (t [256]byte) {
		for i := range t {
			if i <= ' ' || i >= 0x7f || i == '<' || i == '&' || i == '"' || i == '\'' {
				t[i] = 1
			}
		}
		return t
	}())
	notIDTail = newByteSet(except("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz", "0123456789", "_-."))
	// notDateTime: a Timestamp's two values are checked on every match, by
	// table rather than a compare chain per byte (issue 14).
	notDateTime = newByteSet(except("0123456789", "-:.TZ"))
	// special marks the bytes of character data that need a closer look:
	// markup, references, "]]>", control characters and non-ASCII.
	special = newByteSet(func() (t [256]byte) {
		for i := range t {
			if i < 0x20 && i != '\t' && i != '\n' && i != '\r' || i >= 0x80 || i == '<' || i == '&' || i == '>' {
				t[i] = 1
			}
		}
		return t
	}())
)

// idChars admits ASCII NCName characters starting with a letter or '_':
// ids need no normalization and compare byte for byte.
func idChars(v []byte) bool {
	if len(v) > 0 && (v[0] >= 'a' && v[0] <= 'z' || v[0] >= 'A' && v[0] <= 'Z' || v[0] == '_') && none(v[1:], notIDTail) {
		return true
	}
	for i, b := range v {
		letter := b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b == '_'
		if !letter && (i == 0 || !(b >= '0' && b <= '9' || b == '-' || b == '.')) {
			return false
		}
	}
	return true
}

// charData checks character data as the gate does (XML 1.0 §2.2, §2.4,
// §3.3.3): XML characters in UTF-8, no '<', '&' only in a well-formed
// reference to an XML character, no "]]>" in text, no quote in an
// attribute value (the slot ends at the quote, so none can occur).
func charData(v []byte, attr bool) bool {
	if none(v, special) {
		return true
	}
	for i := 0; i < len(v); {
		b := v[i]
		switch {
		case b == '<':
			return false
		case b == '&':
			n := refLen(v[i:])
			if n == 0 {
				return false
			}
			i += n
			continue
		case b == '>' && !attr && i >= 2 && v[i-1] == ']' && v[i-2] == ']':
			return false
		case b < 0x20 && b != '\t' && b != '\n' && b != '\r':
			return false
		case b >= 0x80:
			r, n := utf8.DecodeRune(v[i:])
			if r == utf8.RuneError || !xmlChar(r) {
				return false
			}
			i += n
			continue
		}
		i++
	}
	return true
}

func xmlChar(r rune) bool {
	return r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF || r == '\t' || r == '\n' || r == '\r'
}

// refLen returns the length of a well-formed predefined entity or
// character reference at the start of v, or 0.
func refLen(v []byte) int {
	for _, e := range [...]string{"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"} {
		if len(v) >= len(e) && string(v[:len(e)]) == e {
			return len(e)
		}
	}
	if len(v) < 4 || v[1] != '#' {
		return 0
	}
	hex := v[2] == 'x'
	i := 2
	if hex {
		i = 3
	}
	var r rune
	start := i
	for ; i < len(v) && i < start+8; i++ {
		c := v[i]
		switch {
		case c >= '0' && c <= '9':
			r = r*base(hex) + rune(c-'0')
		case hex && c >= 'a' && c <= 'f':
			r = r*16 + rune(c-'a'+10)
		case hex && c >= 'A' && c <= 'F':
			r = r*16 + rune(c-'A'+10)
		case c == ';':
			if i == start || !xmlChar(r) {
				return 0
			}
			return i + 1
		default:
			return 0
		}
	}
	return 0
}

func base(hex bool) rune {
	if hex {
		return 16
	}
	return 10
}
