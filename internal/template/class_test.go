package template

import "testing"

// TestNone checks the unrolled class scan against the byte loop it
// replaced: one bad byte anywhere, in the unrolled rounds or the tail,
// must be found.
func TestNone(t *testing.T) {
	for n := range 40 {
		v := make([]byte, n)
		for i := range v {
			v[i] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="[i%65]
		}
		t.Run("ok", func(t *testing.T) {
			if !none(v, notBase64) {
				t.Fatalf("len %d: a clean value is refused", n)
			}
		})
		for i := range n {
			for _, bad := range []byte{'<', '&', 0, 0xff, '"'} {
				w := append([]byte(nil), v...)
				w[i] = bad
				if none(w, notBase64) {
					t.Fatalf("fail/len %d: %q at %d is accepted", n, bad, i)
				}
			}
		}
	}
}
