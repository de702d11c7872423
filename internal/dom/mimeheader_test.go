package dom

import (
	"bytes"
	"net/textproto"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWriteMIMEHeaders pins the Attachment-Complete header bytes (SwA
// §5.4.1) to what WSS4J's canonizeMimeHeaders writes.
func TestWriteMIMEHeaders(t *testing.T) {
	tests := []struct {
		name string
		h    textproto.MIMEHeader
		want string
		fail bool
	}{
		{name: "ok/default-content-type", h: textproto.MIMEHeader{"Content-Id": {"<a@b>"}},
			want: "Content-ID:<a@b>\r\nContent-Type:text/plain;charset=\"us-ascii\"\r\n"},
		{name: "ok/params-sorted-lowercased", h: textproto.MIMEHeader{"Content-Type": {`Text/XML; Charset=UTF-8; action="urn:x"`}},
			want: "Content-Type:text/xml;action=\"urn:x\";charset=\"utf-8\"\r\n"},
		{name: "ok/no-params-kept", h: textproto.MIMEHeader{"Content-Type": {"Application/Octet-Stream"}},
			want: "Content-Type:Application/Octet-Stream\r\n"},
		{name: "ok/comments-removed", h: textproto.MIMEHeader{"Content-Location": {`(c) http://x/y "(kept)"`}, "Content-Type": {"a/b"}},
			want: "Content-Location: http://x/y \"(kept)\"\r\nContent-Type:a/b\r\n"},
		{name: "ok/order-and-unlisted-dropped", h: textproto.MIMEHeader{"Content-Type": {"a/b"}, "Content-Transfer-Encoding": {"binary"},
			"Content-Disposition": {"attachment; filename=X.TXT"}, "Content-Description": {"=?utf-8?q?caf=C3=A9?="}},
			want: "Content-Description:café\r\nContent-Disposition:attachment;filename=\"x.txt\"\r\nContent-Type:a/b\r\n"},
		{name: "fail/rfc2231-param", h: textproto.MIMEHeader{"Content-Type": {"a/b; name*=utf-8''x"}}, fail: true},
		{name: "fail/param-without-value", h: textproto.MIMEHeader{"Content-Type": {"a/b; name"}}, fail: true},
		{name: "fail/open-comment", h: textproto.MIMEHeader{"Content-Id": {"<a> (x"}}, fail: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			err := writeMIMEHeaders(&b, &memPart{h: tc.h})
			if tc.fail {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, b.String())
		})
	}
}

func TestCRLFWriter(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"ok/lf", "a\nb", "a\r\nb"},
		{"ok/cr", "a\rb", "a\r\nb"},
		{"ok/crlf", "a\r\nb\r\n", "a\r\nb\r\n"},
		{"ok/lfcr", "\n\r", "\r\n\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Byte by byte too: a CR LF split across writes stays one.
			for _, step := range []int{len(tc.in), 1} {
				var b bytes.Buffer
				w := &crlfWriter{w: &b}
				for i := 0; i < len(tc.in); i += step {
					_, _ = w.Write([]byte(tc.in[i:min(i+step, len(tc.in))]))
				}
				require.Equal(t, tc.want, b.String())
			}
		})
	}
}

func TestCIDFromURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"cid:a%40b", "a@b"}, {"CID:x", "x"}, {"cid:", ""}, {"http://x", ""}, {"file:/etc", ""}, {"a@b", ""}, {"cid:%zz", ""},
	} {
		got, err := cidFromURL(tc.in)
		if tc.want == "" {
			require.Error(t, err, tc.in)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, tc.want, got)
	}
}

// FuzzMIMEHeaders runs the header canonicalization and the encrypted
// header parser on arbitrary input: no panic, and output only on success.
func FuzzMIMEHeaders(f *testing.F) {
	f.Add(`text/plain; charset="a\"b"; x=(c)y`, "Content-Type:a/b\r\n\r\nrest")
	f.Add(`"`, "\r\n")
	f.Add(`a/b;;`, "x")
	f.Fuzz(func(t *testing.T, v, plain string) {
		for _, name := range swaHeaderNames {
			_, _ = canonicalHeader(name, v)
		}
		h, n, err := readPlainHeader([]byte(plain))
		if err == nil && (n > len(plain) || h == nil) {
			t.Fatalf("bad header length %d", n)
		}
		_, _ = cidFromURL(v)
	})
}
