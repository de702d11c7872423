package signer

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rsa"
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/textproto"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// att is one attachment of a test package.
type att struct {
	cid, ctype string
	data       []byte
}

// mtomRoot is a SOAP 1.1 envelope whose Body holds one element per cid,
// each with an xop:Include of it (XOP 1.0 §3: the only child).
func mtomRoot(cids ...string) []byte {
	var b strings.Builder
	b.WriteString(`<soapenv:Envelope xmlns:soapenv="` + nsSOAP11 + `" xmlns:ns1="urn:example:files"><soapenv:Header/><soapenv:Body><ns1:Files>`)
	for _, c := range cids {
		fmt.Fprintf(&b, "\n  <ns1:File name=\"%s\"><xop:Include xmlns:xop=\"%s\" href=\"cid:%s\"/></ns1:File>", c, nsXOP, escapeCID(c))
	}
	b.WriteString("\n</ns1:Files></soapenv:Body></soapenv:Envelope>")
	return []byte(b.String())
}

// writePackage writes an MTOM package: root, then the attachments.
func writePackage(w io.Writer, root []byte, atts []att) (string, error) {
	mw := multipart.NewWriter(w)
	h := textproto.MIMEHeader{}
	h.Set("Content-Type", `application/xop+xml; charset=UTF-8; type="text/xml"`)
	h.Set("Content-ID", "<root@example>")
	h.Set("Content-Transfer-Encoding", "binary")
	pw, err := mw.CreatePart(h)
	if err != nil {
		return "", err
	}
	if _, err := pw.Write(root); err != nil {
		return "", err
	}
	for _, a := range atts {
		h := textproto.MIMEHeader{}
		h.Set("Content-Type", a.ctype)
		h.Set("Content-ID", "<"+a.cid+">")
		h.Set("Content-Transfer-Encoding", "binary")
		if pw, err = mw.CreatePart(h); err != nil {
			return "", err
		}
		if _, err := pw.Write(a.data); err != nil {
			return "", err
		}
	}
	return mtomType(mw.Boundary()), mw.Close()
}

func mtomType(boundary string) string {
	return `multipart/related; type="application/xop+xml"; start="<root@example>"; start-info="text/xml"; boundary="` + boundary + `"`
}

// stdParts adapts mime/multipart's reader to Parts, the way the gateway
// adapts internal/mime's.
type stdParts struct{ r *multipart.Reader }

func newStdParts(t testing.TB, body io.Reader, contentType string) *stdParts {
	t.Helper()
	_, params, err := mime.ParseMediaType(contentType)
	require.NoError(t, err)
	return &stdParts{multipart.NewReader(body, params["boundary"])}
}

func (p *stdParts) Next() (textproto.MIMEHeader, io.Reader, error) {
	part, err := p.r.NextRawPart()
	if err != nil {
		return nil, nil, err
	}
	return part.Header, part, nil
}

// parsed is a signed package as a client reads it.
type parsed struct {
	headers []textproto.MIMEHeader
	bodies  [][]byte
}

func parsePackage(t testing.TB, out []byte, boundary string) *parsed {
	t.Helper()
	r := multipart.NewReader(bytes.NewReader(out), boundary)
	p := &parsed{}
	for {
		part, err := r.NextRawPart()
		if err == io.EOF {
			return p
		}
		require.NoError(t, err)
		b, err := io.ReadAll(part)
		require.NoError(t, err)
		p.headers = append(p.headers, part.Header)
		p.bodies = append(p.bodies, b)
	}
}

var xopInc = regexp.MustCompile(`<xop:Include [^>]*?href="cid:([^"]+)"[^>]*?(?:/>|></xop:Include>)`)

// reassemble turns a signed package into the standard message a receiver
// verifies (DESIGN.md §6): the trailing part put back into the header (in
// the strict variant decrypted with recipient's key first, and its
// EncryptedKey dropped), and in xop mode each attachment inlined as base64
// (the XOP infoset). It also returns the attachments by cid.
func reassemble(t testing.TB, p *parsed, xop bool, recipient *rsa.PrivateKey) ([]byte, map[string][]byte) {
	t.Helper()
	atts := map[string][]byte{}
	for i := 1; i < len(p.bodies); i++ {
		atts[strings.Trim(p.headers[i].Get("Content-ID"), "<>")] = p.bodies[i]
	}
	last := p.bodies[len(p.bodies)-1]
	root := p.bodies[0]
	if recipient != nil {
		last = decryptSignature(t, root, last, recipient)
		root = cut(t, root, "<xenc:EncryptedKey ", "</xenc:EncryptedKey>", nil)
		root = cut(t, root, "<xenc:EncryptedData ", "</xenc:EncryptedData>", last)
	} else {
		sig := bytes.Index(root, []byte("<ds:Signature "))
		require.Positive(t, sig)
		m := xopInc.FindIndex(root[sig:])
		require.NotNil(t, m)
		root = append(append(bytes.Clone(root[:sig+m[0]]), last...), root[sig+m[1]:]...)
	}
	if xop {
		root = xopInc.ReplaceAllFunc(root, func(inc []byte) []byte {
			cid, err := unescapeCID(string(xopInc.FindSubmatch(inc)[1]))
			require.NoError(t, err)
			return []byte(base64.StdEncoding.EncodeToString(atts[cid]))
		})
	}
	return root, atts
}

// cut replaces the first span from start to end (inclusive) by with.
func cut(t testing.TB, b []byte, start, end string, with []byte) []byte {
	t.Helper()
	i := bytes.Index(b, []byte(start))
	require.Positive(t, i, start)
	j := bytes.Index(b[i:], []byte(end))
	require.Positive(t, j, end)
	return append(append(bytes.Clone(b[:i]), with...), b[i+j+len(end):]...)
}

// decryptSignature unwraps the strict variant's key with the recipient's
// RSA key (OAEP, SHA-1) and opens the AES-GCM ciphertext of the last part.
func decryptSignature(t testing.TB, root, ct []byte, recipient *rsa.PrivateKey) []byte {
	t.Helper()
	i := bytes.Index(root, []byte("<xenc:EncryptedKey "))
	require.Positive(t, i)
	cv := regexp.MustCompile(`<xenc:CipherValue>([^<]+)</xenc:CipherValue>`).FindSubmatch(root[i:])
	require.NotNil(t, cv)
	wrapped, err := base64.StdEncoding.DecodeString(string(cv[1]))
	require.NoError(t, err)
	key, err := rsa.DecryptOAEP(sha1.New(), nil, recipient, wrapped, nil)
	require.NoError(t, err)
	blk, err := aes.NewCipher(key)
	require.NoError(t, err)
	g, err := cipher.NewGCM(blk)
	require.NoError(t, err)
	require.Greater(t, len(ct), 12)
	pt, err := g.Open(nil, ct[:12], ct[12:], nil)
	require.NoError(t, err)
	return pt
}

// patterned is n bytes of a repeating pattern, generated as it is read.
type patterned struct{ n, off int64 }

func (p *patterned) Read(b []byte) (int, error) {
	if p.off >= p.n {
		return 0, io.EOF
	}
	if rest := p.n - p.off; int64(len(b)) > rest {
		b = b[:rest]
	}
	for i := range b {
		b[i] = byte((p.off + int64(i)) * 7)
	}
	p.off += int64(len(b))
	return len(b), nil
}
