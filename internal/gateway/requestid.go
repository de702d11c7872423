package gateway

import (
	"crypto/rand"
	"encoding/hex"
)

// HeaderRequestID carries the correlation id in both directions.
const HeaderRequestID = "X-Request-Id"

// requestID keeps a client's correlation id when it is safe to log and echo
// (bounded, token characters only: no log or header injection), and mints a
// random one otherwise.
func requestID(incoming string) string {
	if validRequestID(incoming) {
		return incoming
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func validRequestID(s string) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '-' || c == '_' || c == '.' || c == ':' || c == '@' || c == '+' || c == '/' || c == '='
		if !ok {
			return false
		}
	}
	return true
}
