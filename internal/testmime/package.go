package testmime

import (
	"bytes"
	"io"
	stdmime "mime"
	"mime/multipart"
	"net/textproto"
	"testing"
)

// FileRoot is the root part of the package File builds: one m:File whose
// content is the attachment file@x.
const FileRoot = `<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>` +
	`<m:File xmlns:m="urn:x"><xop:Include xmlns:xop="http://www.w3.org/2004/08/xop/include" href="cid:file@x"/></m:File></soap:Body></soap:Envelope>`

// File is an MTOM package as a backend sends it: FileRoot as <root@x> and
// payload as the attachment <file@x>. It returns the package and its
// boundary (ContentType makes its Content-Type).
func File(tb testing.TB, payload string) (*bytes.Buffer, string) {
	tb.Helper()
	var in bytes.Buffer
	mw := multipart.NewWriter(&in)
	part := func(ct, cid, body string) {
		h := textproto.MIMEHeader{}
		h.Set("Content-Type", ct)
		h.Set("Content-ID", "<"+cid+">")
		w, err := mw.CreatePart(h)
		if err != nil {
			tb.Fatal(err)
		}
		_, _ = io.WriteString(w, body)
	}
	part(`application/xop+xml; charset=UTF-8; type="text/xml"`, "root@x", FileRoot)
	part("application/octet-stream", "file@x", payload)
	if err := mw.Close(); err != nil {
		tb.Fatal(err)
	}
	return &in, mw.Boundary()
}

// ContentType is the Content-Type of an MTOM package whose root is
// <root@x> (File's, or the streaming signer's output of it).
func ContentType(boundary string) string {
	return stdmime.FormatMediaType("multipart/related", map[string]string{
		"type": "application/xop+xml", "start": "<root@x>", "start-info": "text/xml", "boundary": boundary,
	})
}

// RawParts reads a package part by part, raw (no transfer decoding), as
// the streaming signer takes its input (signer.Stream.Sign).
type RawParts struct{ R *multipart.Reader }

// Next returns the next part's header and content.
func (p *RawParts) Next() (textproto.MIMEHeader, io.Reader, error) {
	part, err := p.R.NextRawPart()
	if err != nil {
		return nil, nil, err
	}
	return part.Header, part, nil
}
