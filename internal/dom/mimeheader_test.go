package dom

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/wss"
)

func TestCIDFromURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"cid:a%40b", "a@b"}, {"CID:x", "x"}, {"cid:", ""}, {"http://x", ""}, {"file:/etc", ""}, {"a@b", ""}, {"cid:%zz", ""},
	} {
		got, err := wss.CIDFromURL(tc.in)
		if tc.want == "" {
			require.Error(t, err, tc.in)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, tc.want, got)
	}
}

// FuzzPlainHeader runs the parser of the MIME headers inside a decrypted
// Attachment-Complete plaintext (the canonicalization of headers for the
// signature transforms is fuzzed in internal/swa) and the cid: URL
// decoder on arbitrary input: no panic, and output only on success.
func FuzzPlainHeader(f *testing.F) {
	f.Add("cid:a%40b", "Content-Type:a/b\r\n\r\nrest")
	f.Add(`"`, "\r\n")
	f.Add("cid:", "x")
	f.Fuzz(func(t *testing.T, v, plain string) {
		h, n, err := readPlainHeader([]byte(plain))
		if err == nil && (n > len(plain) || h == nil) {
			t.Fatalf("bad header length %d", n)
		}
		if cid, err := wss.CIDFromURL(v); err == nil && cid == "" {
			t.Fatalf("empty cid from %q", v)
		}
	})
}
