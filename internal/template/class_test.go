package template

import (
	"testing"

	"github.com/wssgw/wssgw/internal/xmlscan"
)

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

// TestDateTimeSet holds the dateTime class's table to the characters an
// xsd:dateTime in UTC is made of, and check to its length bound.
func TestDateTimeSet(t *testing.T) {
	for b := range 256 {
		want := b >= '0' && b <= '9' || b == '-' || b == ':' || b == '.' || b == 'T' || b == 'Z'
		if got := notDateTime.not[b] == 0; got != want {
			t.Fatalf("byte %#x: admitted %v, want %v", b, got, want)
		}
	}
	lim := &xmlscan.Limits{MaxTextLen: 1 << 10}
	for _, c := range []struct {
		name string
		v    string
		ok   bool
	}{
		{"ok/millis", "2026-11-27T23:58:43.000Z", true},
		{"ok/forty", "2026-11-27T23:58:43.00000000000000000000Z"[:40], true},
		{"fail/forty-one", "2026-11-27T23:58:43.000000000000000000000Z"[:41], false},
		{"fail/offset", "2026-11-27T23:58:43+01:00", false},
		{"fail/space", "2026-11-27 23:58:43Z", false},
	} {
		if got := check(classDateTime, []byte(c.v), lim, limitText); got != c.ok {
			t.Errorf("%s: check %v, want %v", c.name, got, c.ok)
		}
	}
}
