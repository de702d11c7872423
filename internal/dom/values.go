package dom

import (
	"github.com/wssgw/wssgw/internal/wss"
)

// b64 is wss.DecodeBase64: both engines read base64 the same way.
func b64(s string) ([]byte, error) { return wss.DecodeBase64(s) }

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
