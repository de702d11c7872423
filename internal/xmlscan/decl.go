package xmlscan

import "bytes"

// The start of the document: byte order mark, encoding, XML declaration.
// Only UTF-8 is accepted (security.md B6): a second encoding is a second
// way to read the same bytes, and etree's pass-through CharsetReader would
// read UTF-16-declared bytes as UTF-8.

// prolog checks the encoding of the whole input and scans an XML
// declaration at the start; it returns the offset after them.
func (st *state) prolog() (int, *Error) {
	data, p := st.data, 0
	switch {
	case bytes.HasPrefix(data, []byte("\xEF\xBB\xBF")):
		// The UTF-8 BOM is allowed (XML 1.0 §4.3.3, Appendix F) and
		// recorded; it is not character data.
		p = 3
		st.d.BOM = true
	case bytes.HasPrefix(data, []byte("\x00\x00\xFE\xFF")), bytes.HasPrefix(data, []byte("\xFF\xFE\x00\x00")):
		return 0, newError(KindBOM, 0, "UTF-32 byte order mark")
	case bytes.HasPrefix(data, []byte("\xFE\xFF")), bytes.HasPrefix(data, []byte("\xFF\xFE")):
		return 0, newError(KindBOM, 0, "UTF-16 byte order mark")
	case len(data) >= 2 && (data[0] == 0 || data[1] == 0):
		// Appendix F.1: 00 3C / 3C 00 is UTF-16 or UTF-32 without a BOM.
		return 0, newError(KindEncoding, 0, "UTF-16 or UTF-32 content")
	}
	hasCR, err := validateChars(data[p:], p)
	if err != nil {
		return p, err
	}
	st.d.HasCR = hasCR
	if isDeclStart(data[p:]) {
		end, err := parseDecl(data, p)
		if err != nil {
			return p, err
		}
		st.d.Decl = Span{p, end}
		p = end
	}
	return p, nil
}

// isDeclStart reports whether b starts with "<?xml" as an XML declaration
// rather than a PI whose target merely starts with "xml".
func isDeclStart(b []byte) bool {
	if !bytes.HasPrefix(b, []byte("<?xml")) {
		return false
	}
	return len(b) == 5 || isSpace(b[5]) || b[5] == '?'
}

// parseDecl parses XMLDecl at data[p:] (XML 1.0 §2.8 [23]):
//
//	'<?xml' VersionInfo EncodingDecl? SDDecl? S? '?>'
//
// VersionInfo must say 1.0 (the only version encoding/xml and wssgw
// support), EncodingDecl UTF-8 in any case (§4.3.3: names are
// case-insensitive), SDDecl yes or no.
func parseDecl(data []byte, p int) (int, *Error) {
	i := p + 5
	v, i, err := declAttr(data, i, "version")
	switch {
	case err != nil:
		return i, err
	case v == nil:
		return i, newError(KindXMLDecl, i, "missing version")
	case string(v) != "1.0":
		return i, newError(KindXMLDecl, i, "unsupported XML version")
	}
	if v, i, err = declAttr(data, i, "encoding"); err != nil {
		return i, err
	}
	if v != nil && !bytes.EqualFold(v, []byte("UTF-8")) {
		return i, newError(KindEncoding, i, "encoding other than UTF-8 declared")
	}
	if v, i, err = declAttr(data, i, "standalone"); err != nil {
		return i, err
	}
	if v != nil && string(v) != "yes" && string(v) != "no" {
		return i, newError(KindXMLDecl, i, "standalone must be yes or no")
	}
	i = skipSpace(data, i)
	if !bytes.HasPrefix(data[i:], []byte("?>")) {
		return i, eofOr(data, i, KindXMLDecl, "malformed XML declaration")
	}
	return i + 2, nil
}

// declAttr parses "S name Eq quoted-value" at data[i:] if present and
// returns the value (nil if absent) and the offset after it.
func declAttr(data []byte, i int, name string) ([]byte, int, *Error) {
	j := skipSpace(data, i)
	if j == i || !bytes.HasPrefix(data[j:], []byte(name)) {
		return nil, i, nil
	}
	j = skipSpace(data, j+len(name))
	if j >= len(data) || data[j] != '=' {
		return nil, j, eofOr(data, j, KindXMLDecl, "expected '=' in XML declaration")
	}
	j = skipSpace(data, j+1)
	if j >= len(data) || data[j] != '"' && data[j] != '\'' {
		return nil, j, eofOr(data, j, KindXMLDecl, "expected quoted value in XML declaration")
	}
	end := bytes.IndexByte(data[j+1:], data[j])
	if end < 0 {
		return nil, len(data), newError(KindEOF, len(data), "unterminated XML declaration")
	}
	return data[j+1 : j+1+end], j + 2 + end, nil
}
