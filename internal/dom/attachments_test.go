package dom

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/c14n"
	"github.com/wssgw/wssgw/internal/testmime"
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

func xopBody(hrefs ...string) string {
	var b strings.Builder
	b.WriteString(`<ns:doc xmlns:ns="urn:x">`)
	for _, h := range hrefs {
		b.WriteString(`<ns:data><xop:Include ` + xopNS + ` href="` + h + `"></xop:Include></ns:data>`)
	}
	b.WriteString(`</ns:doc>`)
	return b.String()
}

func inlineBody(texts ...string) string {
	var b strings.Builder
	b.WriteString(`<ns:doc xmlns:ns="urn:x">`)
	for _, t := range texts {
		b.WriteString(`<ns:data>` + t + `</ns:data>`)
	}
	b.WriteString(`</ns:doc>`)
	return b.String()
}

// mimeBase64 is Santuario's default encodeToString: 76-character lines
// joined by CR LF, written as a character reference in XML.
func mimeBase64(data []byte) string {
	s := base64.StdEncoding.EncodeToString(data)
	var lines []string
	for len(s) > 76 {
		lines, s = append(lines, s[:76]), s[76:]
	}
	return strings.Join(append(lines, s), "&#13;\n")
}

// TestXOP signs the XOP infoset (base64 inline) and sends the package with
// xop:Include in its place: the digest must still verify, and every attack
// on the inclusion must fail.
func TestXOP(t *testing.T) {
	f := newAttFixture(t)
	d1, d2 := randomBytes(1000), randomBytes(333)
	b1, b2 := base64.StdEncoding.EncodeToString(d1), base64.StdEncoding.EncodeToString(d2)
	signedBody := inlineBody(b1, b2)
	sign := func(body string) []byte {
		return f.signed(t, "", "", body, []ref{{uri: "#Body", transform: c14n.AlgExcC14N, digest: bodyDigest(t, signedBody)}})
	}
	two := func() *testmime.Parts {
		return testmime.New(testmime.NewPart("a1@x", "application/octet-stream", d1), testmime.NewPart("a2", "image/png", d2))
	}
	tests := []struct {
		name   string
		msg    []byte
		atts   *testmime.Parts
		reason wss.Reason
	}{
		{"ok/canonical-base64", sign(xopBody("cid:a1%40x", "cid:a2")), two(), 0},
		{"fail/tampered-byte", sign(xopBody("cid:a1%40x", "cid:a2")), func() *testmime.Parts {
			a := two()
			a.ByID["a2"].Data = append([]byte{d2[0] ^ 1}, d2[1:]...)
			return a
		}(), wss.ReasonDigest},
		{"fail/swapped", sign(xopBody("cid:a2", "cid:a1%40x")), two(), wss.ReasonDigest},
		{"fail/href-http", sign(xopBody("http://example.com/a1", "cid:a2")), two(), wss.ReasonReference},
		{"fail/href-file", sign(xopBody("file:///etc/passwd", "cid:a2")), two(), wss.ReasonReference},
		{"fail/href-relative", sign(xopBody("a1@x", "cid:a2")), two(), wss.ReasonReference},
		{"fail/unknown-cid", sign(xopBody("cid:nope", "cid:a2")), two(), wss.ReasonReference},
		{"fail/included-twice", sign(xopBody("cid:a2", "cid:a2")), two(), wss.ReasonReference},
		{"fail/text-sibling", sign(strings.Replace(xopBody("cid:a1%40x", "cid:a2"), "<ns:data><xop", "<ns:data>QQ==<xop", 1)), two(), wss.ReasonStructure},
		{"fail/element-sibling", sign(strings.Replace(xopBody("cid:a1%40x", "cid:a2"), "<ns:data><xop", "<ns:data><ns:x></ns:x><xop", 1)), two(), wss.ReasonStructure},
		// The rules dom takes from mime.CheckInclude (one XOP rule set).
		{"fail/whitespace-sibling", sign(strings.Replace(xopBody("cid:a1%40x", "cid:a2"), "<ns:data><xop", "<ns:data> <xop", 1)), two(), wss.ReasonStructure},
		{"fail/include-with-comment", sign(strings.Replace(xopBody("cid:a1%40x", "cid:a2"), "></xop:Include>", "><!--c--></xop:Include>", 1)), two(), wss.ReasonStructure},
		{"fail/extra-attribute", sign(strings.Replace(xopBody("cid:a1%40x", "cid:a2"), ` href="cid:a2"`, ` href="cid:a2" x="1"`, 1)), two(), wss.ReasonReference},
		{"fail/other-xop-element", sign(strings.Replace(xopBody("cid:a1%40x", "cid:a2"), "xop:Include", "xop:Other", 2)), two(), wss.ReasonReference},
		{"fail/unreferenced-part", sign(xopBody("cid:a1%40x", "cid:a2")), func() *testmime.Parts {
			a := two()
			a.Order = append(a.Order, "extra")
			a.ByID["extra"] = testmime.NewPart("extra", "text/plain", []byte("smuggled"))
			return a
		}(), wss.ReasonStructure},
		{"fail/no-attachments", sign(xopBody("cid:a1%40x", "cid:a2")), nil, wss.ReasonDigest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := f.verify(t, tc.msg, tc.atts)
			if tc.reason != 0 {
				require.Error(t, err)
				require.Equal(t, tc.reason, reasonOf(err), "%v", err)
				return
			}
			require.NoError(t, err)
			require.Len(t, res.Attachments, 2)
			for _, fact := range res.Attachments {
				require.True(t, fact.XOP)
				require.Equal(t, []int{0}, fact.Signatures)
			}
		})
	}
}

// TestXOPMIMELines: WSS4J (Santuario's default) inlines the part as MIME
// base64, 76-character lines separated by CR LF; that form verifies too.
func TestXOPMIMELines(t *testing.T) {
	f := newAttFixture(t)
	data := randomBytes(500)
	msg := f.signed(t, "", "", xopBody("cid:m"), []ref{{uri: "#Body", transform: c14n.AlgExcC14N, digest: bodyDigest(t, inlineBody(mimeBase64(data)))}})
	_, err := f.verify(t, msg, testmime.New(testmime.NewPart("m", "application/octet-stream", data)))
	require.NoError(t, err)
}

// TestXOPUnsigned: an attachment included outside every signed element is
// rejected when the policy wants a signature, and passes when it does not.
func TestXOPUnsigned(t *testing.T) {
	f := newAttFixture(t)
	data := randomBytes(10)
	hdr := `<ns:h xmlns:ns="urn:x"><xop:Include ` + xopNS + ` href="cid:u"></xop:Include></ns:h>`
	body := inlineBody("x")
	msg := f.signed(t, "", "", body, []ref{{uri: "#Body", transform: c14n.AlgExcC14N, digest: bodyDigest(t, body)}})
	msg = bytes.Replace(msg, []byte("<soap:Header>"), []byte("<soap:Header>"+hdr), 1)
	_, err := f.verify(t, msg, testmime.New(testmime.NewPart("u", "application/octet-stream", data)))
	require.Equal(t, wss.ReasonPolicy, reasonOf(err), "%v", err)
	f.requireSig = false
	res, err := f.verify(t, msg, testmime.New(testmime.NewPart("u", "application/octet-stream", data)))
	require.NoError(t, err)
	require.Empty(t, res.Attachments[0].Signatures)
}

// TestSwAReference checks SwA References (WSS SwA Profile 1.1 §5.2-5.4).
func TestSwAReference(t *testing.T) {
	f := newAttFixture(t)
	body := inlineBody("x")
	bodyRef := ref{uri: "#Body", transform: c14n.AlgExcC14N, digest: bodyDigest(t, body)}
	bin := randomBytes(100)
	text := testmime.NewPart("t1", "text/plain; charset=UTF-8", []byte("line1\nline2\rline3\r\n"))
	// The Complete transform's bytes, written out by hand from SwA §5.4.1
	// and WSS4J's canonizeMimeHeaders.
	complete := "Content-ID:<t1>\r\nContent-Type:text/plain;charset=\"utf-8\"\r\nline1\r\nline2\r\nline3\r\n"
	tests := []struct {
		name   string
		refs   []ref
		atts   *testmime.Parts
		reason wss.Reason
	}{
		{"ok/content-binary", []ref{bodyRef, {"cid:b1", trSwAContent, sha(bin)}}, testmime.New(testmime.NewPart("b1", "application/octet-stream", bin)), 0},
		{"ok/content-text-crlf", []ref{bodyRef, {"cid:t1", trSwAContent, sha([]byte("line1\r\nline2\r\nline3\r\n"))}}, testmime.New(text), 0},
		{"ok/complete", []ref{bodyRef, {"cid:t1", trSwAComplete, sha([]byte(complete))}}, testmime.New(text), 0},
		{"ok/content-xml", []ref{bodyRef, {"cid:x1", trSwAContent, sha([]byte(`<a xmlns="urn:a"><b c="1"></b></a>`))}},
			testmime.New(testmime.NewPart("x1", "application/soap+xml", []byte(`<a xmlns="urn:a"><!-- c --><b c='1'/></a>`))), 0},
		{"fail/tampered", []ref{bodyRef, {"cid:b1", trSwAContent, sha(bin)}}, testmime.New(testmime.NewPart("b1", "application/octet-stream", append([]byte{1}, bin...))), wss.ReasonDigest},
		{"fail/second-transform", []ref{bodyRef, {"cid:b1", trSwAContent + `"></ds:Transform><ds:Transform Algorithm="` + c14n.AlgExcC14N, sha(bin)}},
			testmime.New(testmime.NewPart("b1", "application/octet-stream", bin)), wss.ReasonAlgorithm},
		{"fail/c14n-transform", []ref{bodyRef, {"cid:b1", c14n.AlgExcC14N, sha(bin)}}, testmime.New(testmime.NewPart("b1", "application/octet-stream", bin)), wss.ReasonAlgorithm},
		{"fail/swa-transform-on-id", []ref{{"#Body", trSwAContent, bodyRef.digest}}, testmime.New(), wss.ReasonAlgorithm},
		{"fail/unknown-cid", []ref{bodyRef, {"cid:zz", trSwAContent, sha(bin)}}, testmime.New(testmime.NewPart("b1", "application/octet-stream", bin)), wss.ReasonReference},
		{"fail/unsigned-part", []ref{bodyRef, {"cid:b1", trSwAContent, sha(bin)}}, testmime.New(testmime.NewPart("b1", "application/octet-stream", bin), testmime.NewPart("b2", "application/octet-stream", bin)), wss.ReasonStructure},
		{"fail/no-attachments", []ref{bodyRef, {"cid:b1", trSwAContent, sha(bin)}}, nil, wss.ReasonReference},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := f.verify(t, f.signed(t, "", "", body, tc.refs), tc.atts)
			if tc.reason != 0 {
				require.Equal(t, tc.reason, reasonOf(err), "%v", err)
				return
			}
			require.NoError(t, err)
			require.True(t, res.Attachments[0].SwA)
			require.Equal(t, []int{0}, res.Attachments[0].Signatures)
		})
	}
}

// TestSwAReferenceUnreferencedPart: a part signed by nobody and named by
// nothing is rejected even without a signature requirement.
func TestSwAReferenceUnreferencedPart(t *testing.T) {
	f := newAttFixture(t)
	f.requireSig = false
	body := inlineBody("x")
	msg := f.signed(t, "", "", body, []ref{{"#Body", c14n.AlgExcC14N, bodyDigest(t, body)}})
	_, err := f.verify(t, msg, testmime.New(testmime.NewPart("lone", "text/plain", []byte("x"))))
	require.Equal(t, wss.ReasonStructure, reasonOf(err), "%v", err)
}

// TestEncryptedAttachment decrypts SwA attachments (§5.5) in WSS4J's
// sign-then-encrypt layout: EncryptedKey and EncryptedData first in the
// header, then the Signature over the plaintext.
func TestEncryptedAttachment(t *testing.T) {
	body := inlineBody("x")
	plain := []byte("attachment plaintext")
	tests := []struct {
		name    string
		typ     string
		payload []byte // what is encrypted
		mutate  func(f *attFixture, ct []byte) []byte
		reason  wss.Reason
		wantCT  string
		wantOut []byte
	}{
		{name: "ok/content-only", typ: typeSwAContent, payload: plain, wantCT: "text/plain", wantOut: plain},
		{name: "ok/complete", typ: typeSwAComplete, payload: append([]byte("Content-Type:text/plain\r\nContent-Description:inner\r\n\r\n"), plain...), wantCT: "text/plain", wantOut: plain},
		{name: "fail/gcm-tag", typ: typeSwAContent, payload: plain, reason: wss.ReasonDecrypt,
			mutate: func(_ *attFixture, ct []byte) []byte { ct[len(ct)-1] ^= 1; return ct }},
		{name: "fail/oversize", typ: typeSwAContent, payload: plain, reason: wss.ReasonStructure,
			mutate: func(f *attFixture, ct []byte) []byte { f.e.bufferLimit = int64(len(ct) - 1); return ct }},
		{name: "fail/complete-bad-header", typ: typeSwAComplete, payload: []byte("no header here"), reason: wss.ReasonDecrypt},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newAttFixture(t)
			hdr, ct := f.encryptedAttachment(t, "e1", tc.typ, "text/plain", tc.payload)
			if tc.mutate != nil {
				ct = tc.mutate(f, ct)
			}
			msg := f.signed(t, hdr, "", body, []ref{{"#Body", c14n.AlgExcC14N, bodyDigest(t, body)}, {"cid:e1", trSwAContent, sha(plain)}})
			atts := testmime.New(testmime.NewPart("e1", "application/octet-stream", ct))
			res, err := f.verify(t, msg, atts)
			if tc.reason != 0 {
				require.Equal(t, tc.reason, reasonOf(err), "%v", err)
				return
			}
			require.NoError(t, err)
			got := atts.ByID["e1"]
			require.Equal(t, tc.wantOut, got.Data)
			require.Equal(t, tc.wantCT, got.ContentType())
			require.True(t, res.Attachments[0].Decrypted)
			require.True(t, res.Attachments[0].SwA)
			require.NotContains(t, string(res.Document), "EncryptedData")
		})
	}
}

// TestEncryptedAttachmentNeedsAttachments: an attachment EncryptedData in a
// message without attachments is refused.
func TestEncryptedAttachmentNeedsAttachments(t *testing.T) {
	f := newAttFixture(t)
	f.requireSig = false
	hdr, _ := f.encryptedAttachment(t, "e1", typeSwAContent, "text/plain", []byte("x"))
	body := inlineBody("x")
	msg := f.signed(t, hdr, "", body, []ref{{"#Body", c14n.AlgExcC14N, bodyDigest(t, body)}})
	_, err := f.verify(t, msg, nil)
	require.Equal(t, wss.ReasonReference, reasonOf(err), "%v", err)
}

// TestXOPDigestStreams: a 64 MiB attachment is digested without the engine
// allocating anything near its size (the base64 is streamed into the
// digest, never materialized).
func TestXOPDigestStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("64 MiB attachment")
	}
	f := newAttFixture(t)
	data := randomBytes(64 << 20)
	// The Body digest over the inline form, computed in pieces: the
	// canonical Body around a marker, with the base64 streamed in.
	var d xmlscan.Document
	require.NoError(t, xmlscan.Scan([]byte(envelope("", inlineBody("MARK"))), &d))
	canon, err := c14n.Canonicalize(c14n.AlgExcC14N, &d, 2, nil, nil)
	require.NoError(t, err)
	pre, post, _ := bytes.Cut(canon, []byte("MARK"))
	h := sha256.New()
	h.Write(pre)
	enc := base64.NewEncoder(base64.StdEncoding, h)
	enc.Write(data)
	enc.Close()
	h.Write(post)
	msg := f.signed(t, "", "", xopBody("cid:big"), []ref{{"#Body", c14n.AlgExcC14N, h.Sum(nil)}})
	atts := testmime.New(testmime.NewPart("big", "application/octet-stream", data))
	p := f.policy(t)

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res, _, err := p.VerifyAttachments(t.Context(), f.e, msg, atts, f.now)
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	require.Equal(t, []int{0}, res.Attachments[0].Signatures)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(4<<20), "allocated bytes while digesting 64 MiB")
}
