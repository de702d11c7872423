package signer

import (
	"bytes"
	"context"
	"net/textproto"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/testmime"
)

// swaAtts are attachments whose SwA content is canonicalized (SwA Profile
// 1.1 §5.4.2): text with LF line ends, XML not in canonical form, and a
// binary part next to them.
func swaAtts() []att {
	return []att{
		{cid: "notes@example", ctype: "text/plain; charset=UTF-8", data: []byte("line 1\nline 2\n")},
		{cid: "data@example", ctype: "text/xml", data: []byte(`<?xml version="1.0"?>` + "\n" +
			`<d:data xmlns:d="urn:example:data"  xmlns:u="urn:unused"><d:item n='1'/></d:data>`)},
		{cid: "scan@example", ctype: "image/png", data: bytes.Repeat([]byte{0x89, 'P', 'N', 'G', '\r', '\n'}, 100)},
	}
}

// signSwA streams a plain SwA package (no xop:Include) of atts through
// Stream in mode and returns the signed package.
func signSwA(t *testing.T, p *pki, mode string, atts []att) (*Stream, []byte) {
	t.Helper()
	var in bytes.Buffer
	ct, err := writePackage(&in, mtomRoot(), atts)
	require.NoError(t, err)
	s, err := NewStream(streamOpts(p.rsa, mode))
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, s.Sign(&out, newStdParts(t, &in, ct)))
	return s, out.Bytes()
}

// TestStreamSwATextXML: a streamed response with text and XML parts, in
// both SwA modes, verifies with the DOM engine, which canonicalizes the
// parts with the same internal/swa transforms the signer streamed them
// through. Changes the canonical forms absorb (line ends, XML syntax) keep
// it valid; changes of content, and in Complete mode of a covered header,
// do not.
func TestStreamSwATextXML(t *testing.T) {
	p := testPKI(t)
	v := newDOMVerifier(t, p)
	for _, mode := range []string{AttachSwAContent, AttachSwAComplete} {
		s, out := signSwA(t, p, mode, swaAtts())
		pkg := parsePackage(t, out, s.Boundary())
		root, _ := reassemble(t, pkg, false, nil)
		tests := []struct {
			name   string
			change func(m *testmime.Parts)
			ok     bool
		}{
			{"ok/as-sent", nil, true},
			{"ok/text-crlf-line-ends", setData("notes@example", "line 1\r\nline 2\r\n"), true},
			{"ok/xml-other-syntax", setData("data@example", `<d:data xmlns:u="urn:unused" xmlns:d="urn:example:data"><d:item n="1"></d:item></d:data>`), true},
			{"fail/text-changed", setData("notes@example", "line 1\nline 3\n"), false},
			{"fail/xml-changed", setData("data@example", `<d:data xmlns:d="urn:example:data"><d:item n="2"/></d:data>`), false},
			{"fail/binary-line-ends", setData("scan@example", string(bytes.Repeat([]byte{0x89, 'P', 'N', 'G', '\n'}, 100))), false},
			// Only Attachment-Complete covers the MIME headers (§5.3.2).
			{map[bool]string{true: "ok/header-not-covered", false: "fail/header-covered"}[mode == AttachSwAContent],
				setType("notes@example", "text/plain; charset=ISO-8859-1"), mode == AttachSwAContent},
		}
		for _, tc := range tests {
			t.Run(mode+"/"+tc.name, func(t *testing.T) {
				ma := newMemAtts(pkg)
				if tc.change != nil {
					tc.change(ma)
				}
				res, _, err := v.policy.VerifyAttachments(context.Background(), v.engine, root, ma, time.Now())
				if !tc.ok {
					require.Error(t, err)
					return
				}
				require.NoError(t, err)
				require.True(t, res.SignedByTrusted(res.Body))
				require.Len(t, res.Attachments, 3)
				for i := range res.Attachments {
					require.True(t, res.AttachmentSignedByTrusted(&res.Attachments[i]), res.Attachments[i].CID)
				}
			})
		}
	}
}

func setData(cid, data string) func(m *testmime.Parts) {
	return func(m *testmime.Parts) {
		a := m.ByID[cid]
		m.ByID[cid] = &testmime.Part{ID: cid, Head: a.Head, Data: []byte(data)}
	}
}

func setType(cid, ct string) func(m *testmime.Parts) {
	return func(m *testmime.Parts) {
		a := m.ByID[cid]
		h := textproto.MIMEHeader{}
		for k, v := range a.Head {
			h[k] = append([]string(nil), v...)
		}
		h.Set("Content-Type", ct)
		m.ByID[cid] = &testmime.Part{ID: cid, Head: h, Data: a.Data}
	}
}
