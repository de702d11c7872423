package mime

import (
	"bufio"
	"bytes"
	"fmt"
	stdmime "mime"
	"net/textproto"
	"strings"
)

// singleFields may appear at most once in a part header: two values would
// let two consumers pick different ones.
var singleFields = []string{"Content-Id", "Content-Type", "Content-Transfer-Encoding"}

// parseHeader parses a header block that ends with CRLF CRLF. A CR or LF
// outside a CRLF pair is rejected: textproto accepts bare LF line ends.
func parseHeader(block []byte) (textproto.MIMEHeader, error) {
	for i, c := range block {
		if c == '\r' && (i+1 == len(block) || block[i+1] != '\n') ||
			c == '\n' && (i == 0 || block[i-1] != '\r') {
			return nil, fmt.Errorf("%w: bare CR or LF in a part header", ErrMalformed)
		}
	}
	r := textproto.NewReader(bufio.NewReaderSize(bytes.NewReader(block), len(block)))
	h, err := r.ReadMIMEHeader()
	if err != nil {
		return nil, fmt.Errorf("%w: part header: %w", ErrMalformed, err)
	}
	return h, nil
}

// partInfo validates the fields this package interprets and returns the
// Content-ID (without brackets) and the Content-Type as sent.
func partInfo(h textproto.MIMEHeader) (cid, ctype string, err error) {
	for _, k := range singleFields {
		if len(h[k]) > 1 {
			return "", "", fmt.Errorf("%w: %s appears %d times", ErrMalformed, k, len(h[k]))
		}
	}
	if v, ok := h["Content-Id"]; ok {
		if cid, err = parseMsgID(v[0], true); err != nil {
			return "", "", fmt.Errorf("%w: Content-ID: %w", ErrMalformed, err)
		}
	}
	if v, ok := h["Content-Type"]; ok {
		ctype = strings.Trim(v[0], " \t")
		if _, _, err := stdmime.ParseMediaType(ctype); err != nil || hasCTL(ctype) {
			return "", "", fmt.Errorf("%w: Content-Type %q: %v", ErrMalformed, ctype, err)
		}
	}
	switch cte := lowerASCII(strings.Trim(h.Get("Content-Transfer-Encoding"), " \t")); cte {
	case "", "binary", "8bit", "7bit":
	default:
		return "", "", fmt.Errorf("%w: %q (only binary, 8bit and 7bit)", ErrEncoding, cte)
	}
	return cid, ctype, nil
}

func hasCTL(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' && c != '\t' || c == 0x7f {
			return true
		}
	}
	return false
}

func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}
