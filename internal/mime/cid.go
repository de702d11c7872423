package mime

import (
	"fmt"
	"strings"
)

// CIDFromURL returns the Content-ID a "cid:" URL names (RFC 2392 §2: the
// scheme is case-insensitive, the rest is the %-encoded addr-spec of the
// Content-ID without brackets). Every other URL, relative references and
// the empty string are rejected: attachments are the only thing a
// reference may point outside the envelope to, and a gateway must never
// fetch anything (security.md A7, C7; CVE-2022-46364).
func CIDFromURL(href string) (string, error) {
	const scheme = "cid:"
	if len(href) < len(scheme) || !strings.EqualFold(href[:len(scheme)], scheme) {
		return "", fmt.Errorf("%w: %q is not a cid: URL", ErrReference, href)
	}
	id, err := percentDecode(href[len(scheme):])
	if err != nil {
		return "", fmt.Errorf("%w: %q: %w", ErrReference, href, err)
	}
	if _, err := parseMsgID("<"+id+">", true); err != nil {
		return "", fmt.Errorf("%w: %q: %w", ErrReference, href, err)
	}
	return id, nil
}

// percentDecode decodes %hh escapes. Unlike url.PathUnescape it rejects
// raw characters that a URL cannot contain (RFC 3986 §2), so that one
// Content-ID has few spellings.
func percentDecode(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%':
			if i+2 >= len(s) || unhex(s[i+1]) < 0 || unhex(s[i+2]) < 0 {
				return "", fmt.Errorf("bad %%-escape at offset %d", i)
			}
			b.WriteByte(byte(unhex(s[i+1])<<4 | unhex(s[i+2])))
			i += 2
		case c <= ' ' || c >= 0x7f || strings.IndexByte(`"<>\^`+"`{|}", c) >= 0:
			return "", fmt.Errorf("character %q must be %%-encoded", c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c - 'a' + 10)
	case 'A' <= c && c <= 'F':
		return int(c - 'A' + 10)
	}
	return -1
}
