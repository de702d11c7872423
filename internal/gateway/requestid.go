package gateway

import (
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
)

// HeaderRequestID carries the correlation id in both directions.
const HeaderRequestID = "X-Request-Id"

// requestID keeps a client's correlation id when it is safe to log and echo
// (bounded, token characters only: no log or header injection), and mints a
// random one otherwise. The id correlates log lines and answers; it
// guards nothing, so it comes from the runtime's per-thread ChaCha8
// generator (math/rand/v2, seeded by the OS) rather than from crypto/rand,
// whose getrandom system call per request showed in wssgw's profile
// (issue 14).
func requestID(incoming string) string {
	if validRequestID(incoming) {
		return incoming
	}
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(b[8:], rand.Uint64())
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
