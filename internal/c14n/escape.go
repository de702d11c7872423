package c14n

// Escaping of C14N 1.0 §2.3 ("Processing Model", text and attribute
// nodes), applied to values already normalized by xmlscan.

// textEsc marks the characters replaced in text nodes: & < > and #xD.
var textEsc = [256]bool{'&': true, '<': true, '>': true, '\r': true}

// attrEsc marks the characters replaced in attribute values: & < " #x9
// #xA #xD.
var attrEsc = [256]bool{'&': true, '<': true, '"': true, '\t': true, '\n': true, '\r': true}

// text emits a normalized text value: "&" -> "&amp;", "<" -> "&lt;",
// ">" -> "&gt;", #xD -> "&#xD;" (C14N 1.0 §2.3, text nodes).
func (s *state) text(v []byte) {
	start := 0
	for i, c := range v {
		if !textEsc[c] {
			continue
		}
		if i > start {
			s.raw(v[start:i])
		}
		switch c {
		case '&':
			s.str("&amp;")
		case '<':
			s.str("&lt;")
		case '>':
			s.str("&gt;")
		default:
			s.str("&#xD;")
		}
		start = i + 1
	}
	if start < len(v) {
		s.raw(v[start:])
	}
}

// appendAttr appends a normalized attribute value escaped: "&" -> "&amp;",
// "<" -> "&lt;", '"' -> "&quot;", #x9 -> "&#x9;", #xA -> "&#xA;", #xD ->
// "&#xD;" (C14N 1.0 §2.3, attribute nodes). Values are bounded by the
// gate's MaxAttrValueLen, so this does not flush.
func appendAttr[T ~string | ~[]byte](buf []byte, v T) []byte {
	start := 0
	for i := 0; i < len(v); i++ {
		if !attrEsc[v[i]] {
			continue
		}
		buf = append(buf, v[start:i]...)
		switch v[i] {
		case '&':
			buf = append(buf, "&amp;"...)
		case '<':
			buf = append(buf, "&lt;"...)
		case '"':
			buf = append(buf, "&quot;"...)
		case '\t':
			buf = append(buf, "&#x9;"...)
		case '\n':
			buf = append(buf, "&#xA;"...)
		default:
			buf = append(buf, "&#xD;"...)
		}
		start = i + 1
	}
	return append(buf, v[start:]...)
}

// AppendText appends a text value, already normalized (references
// resolved, line ends normalized), escaped as C14N 1.0 §2.3 requires. The
// template automaton uses it to produce the canonical form of a slot, the
// signer to write markup that is canonical as written.
func AppendText[T ~string | ~[]byte](dst []byte, v T) []byte {
	start := 0
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !textEsc[c] {
			continue
		}
		dst = append(dst, v[start:i]...)
		switch c {
		case '&':
			dst = append(dst, "&amp;"...)
		case '<':
			dst = append(dst, "&lt;"...)
		case '>':
			dst = append(dst, "&gt;"...)
		default:
			dst = append(dst, "&#xD;"...)
		}
		start = i + 1
	}
	return append(dst, v[start:]...)
}

// AppendAttr appends an attribute value, already normalized, escaped as
// C14N 1.0 §2.3 requires; attribute-value normalization (XML 1.0 §3.3.3)
// of the result gives v back unchanged.
func AppendAttr[T ~string | ~[]byte](dst []byte, v T) []byte { return appendAttr(dst, v) }
