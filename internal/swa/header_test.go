package swa

import (
	"bytes"
	"net/textproto"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWriteHeaders pins the Attachment-Complete header bytes (SwA §5.4.1)
// to what WSS4J's AttachmentUtils.canonizeMimeHeaders writes.
func TestWriteHeaders(t *testing.T) {
	tests := []struct {
		name string
		h    textproto.MIMEHeader
		want string
	}{
		{name: "ok/default-content-type", h: textproto.MIMEHeader{"Content-Id": {"<a@b>"}},
			want: "Content-ID:<a@b>\r\nContent-Type:text/plain;charset=\"us-ascii\"\r\n"},
		{name: "ok/params-sorted-lowercased", h: textproto.MIMEHeader{"Content-Type": {`Text/XML; Charset=UTF-8; action="urn:x"`}},
			want: "Content-Type:text/xml;action=\"urn:x\";charset=\"utf-8\"\r\n"},
		{name: "ok/no-params-kept", h: textproto.MIMEHeader{"Content-Type": {"Application/Octet-Stream"}},
			want: "Content-Type:Application/Octet-Stream\r\n"},
		{name: "ok/comments-removed", h: textproto.MIMEHeader{"Content-Location": {`(c) http://x/y "(kept)"`}, "Content-Type": {"a/b"}},
			want: "Content-Location: http://x/y \"(kept)\"\r\nContent-Type:a/b\r\n"},
		{name: "ok/nested-comment", h: textproto.MIMEHeader{"Content-Location": {"(a(b)c)http://x"}, "Content-Type": {"a/b"}},
			want: "Content-Location:http://x\r\nContent-Type:a/b\r\n"},
		{name: "ok/order-and-unlisted-dropped", h: textproto.MIMEHeader{"Content-Type": {"a/b"}, "Content-Transfer-Encoding": {"binary"},
			"Content-Disposition": {"attachment; filename=X.TXT"}, "Content-Description": {"=?utf-8?q?caf=C3=A9?="}},
			want: "Content-Description:café\r\nContent-Disposition:attachment;filename=\"x.txt\"\r\nContent-Type:a/b\r\n"},
		{name: "ok/folded-content-type", h: textproto.MIMEHeader{"Content-Type": {"text/plain;\r\n charset=UTF-8"}},
			want: "Content-Type:text/plain;charset=\"utf-8\"\r\n"},
		{name: "ok/folded-description-keeps-blank", h: textproto.MIMEHeader{"Content-Description": {"a\r\n\tb"}, "Content-Type": {"a/b"}},
			want: "Content-Description:a\tb\r\nContent-Type:a/b\r\n"},
		{name: "ok/description-leading-blank-kept", h: textproto.MIMEHeader{"Content-Description": {" d"}, "Content-Type": {"a/b"}},
			want: "Content-Description: d\r\nContent-Type:a/b\r\n"},
		{name: "ok/id-leading-blanks-trimmed", h: textproto.MIMEHeader{"Content-Id": {" \t<a@b>"}, "Content-Type": {"a/b"}},
			want: "Content-ID:<a@b>\r\nContent-Type:a/b\r\n"},
		{name: "ok/name-case-any", h: textproto.MIMEHeader{"content-type": {"a/b"}, "CONTENT-ID": {"<x>"}},
			want: "Content-ID:<x>\r\nContent-Type:a/b\r\n"},
		{name: "ok/first-value-counts", h: textproto.MIMEHeader{"Content-Type": {"a/b", "c/d"}},
			want: "Content-Type:a/b\r\n"},
		// WSS4J's unquoteInnerText keeps escaped quotes and, when the value
		// ends in one, drops the closing quote: ported as it is.
		{name: "ok/escaped-quotes-wss4j-quirk", h: textproto.MIMEHeader{"Content-Type": {`a/b; x="a\"b\""`}},
			want: "Content-Type:a/b;x=\"a\\\"b\\\"\r\n"},
		{name: "ok/caseless-and-cased-params", h: textproto.MIMEHeader{"Content-Disposition": {"Attachment; Name=X.TXT; Size=ABC"}, "Content-Type": {"a/b"}},
			want: "Content-Disposition:attachment;name=\"X.TXT\";size=\"abc\"\r\nContent-Type:a/b\r\n"},
		{name: "ok/trailing-semicolon", h: textproto.MIMEHeader{"Content-Type": {"a/b; x=1;"}},
			want: "Content-Type:a/b;x=\"1\"\r\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			require.NoError(t, WriteHeaders(&b, tc.h))
			require.Equal(t, tc.want, b.String())
		})
	}
}

// TestWriteHeadersFail: values the canonicalization cannot map to one
// unambiguous form are refused, never guessed at.
func TestWriteHeadersFail(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    textproto.MIMEHeader
	}{
		{"fail/rfc2231-param", textproto.MIMEHeader{"Content-Type": {"a/b; name*=utf-8''x"}}},
		{"fail/rfc2231-continuation", textproto.MIMEHeader{"Content-Type": {"a/b; name*0=x; name*1=y"}}},
		{"fail/param-without-value", textproto.MIMEHeader{"Content-Type": {"a/b; name"}}},
		{"fail/param-empty-value", textproto.MIMEHeader{"Content-Type": {"a/b; name="}}},
		{"fail/semicolon-in-quoted-param", textproto.MIMEHeader{"Content-Type": {`a/b; x="1;2"`}}},
		{"fail/open-comment", textproto.MIMEHeader{"Content-Id": {"<a> (x"}}},
		{"fail/open-quote", textproto.MIMEHeader{"Content-Location": {`"http://x`}}},
		// uncomment does not read backslash escapes (neither does WSS4J's):
		// an odd number of quotes leaves one open.
		{"fail/escaped-quote-leaves-one-open", textproto.MIMEHeader{"Content-Type": {`a/b; x="a\"b"`}}},
		{"fail/unknown-charset-description", textproto.MIMEHeader{"Content-Description": {"=?x-unknown?q?a?="}}},
		// An encoded word that decodes to a line end would spell another
		// header's line inside Content-Description.
		{"fail/description-decodes-to-line-end", textproto.MIMEHeader{
			"Content-Description": {"=?utf-8?q?d=0D=0AContent-Disposition:attachment?="}, "Content-Type": {"a/b"}}},
		{"fail/bare-lf-in-id", textproto.MIMEHeader{"Content-Id": {"<a>\nContent-Type:x/y"}}},
		{"fail/unfolded-crlf-without-blank", textproto.MIMEHeader{"Content-Location": {"x\r\ny"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			require.ErrorIs(t, WriteHeaders(&b, tc.h), ErrHeader)
			require.Zero(t, b.Len(), "nothing is written on failure")
		})
	}
}

// TestWriteHeadersNoSplice is the attack the line-end check stops: the
// Content-Disposition moved into an encoded Content-Description would
// otherwise give the same bytes as the header set that was signed.
func TestWriteHeadersNoSplice(t *testing.T) {
	signed := textproto.MIMEHeader{"Content-Description": {"d"}, "Content-Disposition": {"attachment"}, "Content-Type": {"a/b"}}
	var want bytes.Buffer
	require.NoError(t, WriteHeaders(&want, signed))
	forged := textproto.MIMEHeader{"Content-Description": {"=?utf-8?q?d=0D=0AContent-Disposition:attachment?="}, "Content-Type": {"a/b"}}
	var got bytes.Buffer
	err := WriteHeaders(&got, forged)
	require.True(t, err != nil || got.String() != want.String(), "a forged header set digests like the signed one")
}

// FuzzWriteHeaders runs the header canonicalization on arbitrary values:
// no panic; on success one "Name:value" CR LF line per covered header, in
// the profile's order, and the same bytes every time.
func FuzzWriteHeaders(f *testing.F) {
	f.Add("Content-Type", `text/plain; charset="a\"b"; x=(c)y`)
	f.Add("Content-Description", "=?utf-8?q?caf=C3=A9?= (x)")
	f.Add("Content-Disposition", "attachment;\r\n filename=X;;")
	f.Add("Content-Id", `"`)
	f.Add("content-location", "(a(b)c)\r\n\tx")
	f.Fuzz(func(t *testing.T, name, v string) {
		h := textproto.MIMEHeader{name: {v}, "Content-Id": {"<a@b>"}}
		var b1, b2 bytes.Buffer
		err := WriteHeaders(&b1, h)
		if err != nil {
			if b1.Len() != 0 {
				t.Fatalf("output on failure: %q", b1.String())
			}
			return
		}
		if WriteHeaders(&b2, h) != nil || b1.String() != b2.String() {
			t.Fatalf("not deterministic: %q vs %q", b1.String(), b2.String())
		}
		checkLines(t, b1.String())
	})
}

func checkLines(t *testing.T, out string) {
	t.Helper()
	if !strings.HasSuffix(out, "\r\n") {
		t.Fatalf("no final CR LF: %q", out)
	}
	next := 0
	for _, line := range strings.Split(strings.TrimSuffix(out, "\r\n"), "\r\n") {
		name, _, ok := strings.Cut(line, ":")
		for next < len(headerNames) && headerNames[next] != name {
			next++
		}
		if !ok || next == len(headerNames) || strings.ContainsAny(line, "\r\n") {
			t.Fatalf("line %q out of order or not a covered header in %q", line, out)
		}
		next++
	}
}
