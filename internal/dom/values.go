package dom

import (
	"encoding/base64"

	"github.com/wssgw/wssgw/internal/wss"
)

// b64 decodes base64 element content. XML Signature's base64 (RFC 2045)
// allows white space anywhere, so it is dropped first; nothing else is
// tolerated (no padding tricks: StdEncoding is strict about trailing bits).
func b64(s string) ([]byte, error) {
	clean := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ' ', '\t', '\n', '\r':
		default:
			clean = append(clean, c)
		}
	}
	out := make([]byte, base64.StdEncoding.DecodedLen(len(clean)))
	n, err := base64.StdEncoding.Strict().Decode(out, clean)
	if err != nil || len(clean) == 0 {
		return nil, wss.Failf(wss.ReasonMalformed, "bad base64")
	}
	return out[:n], nil
}

// only returns the single child element of i, or an error naming what.
func (m *message) only(i int, what string) (int, error) {
	kids := m.children(i)
	if len(kids) != 1 {
		return -1, wss.Failf(wss.ReasonStructure, "%s must have exactly one child element", what)
	}
	return kids[0], nil
}

// child returns the first child of i named {space}local, or -1.
func (m *message) child(i int, space, local string) int {
	for _, c := range m.children(i) {
		if m.is(c, space, local) {
			return c
		}
	}
	return -1
}
