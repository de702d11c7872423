package e2e

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/signer"
)

const (
	mtomBoundary = "MIMEBoundary-e2e-7f3a"
	mtomRootCID  = "root@e2e.example"
	mtomAttCID   = "data@e2e.example"
	xopInclude   = `<xop:Include xmlns:xop="http://www.w3.org/2004/08/xop/include" href="%s"/>`
)

// mtomPart is one part of a test package.
type mtomPart struct {
	cid, ctype string
	data       []byte
}

// mtomPackage assembles parts (the first is the root) as a multipart/related
// body with CRLF line ends and binary content.
func mtomPackage(parts []mtomPart) []byte {
	var b bytes.Buffer
	for _, p := range parts {
		fmt.Fprintf(&b, "--%s\r\nContent-Type: %s\r\nContent-Transfer-Encoding: binary\r\nContent-ID: <%s>\r\n\r\n", mtomBoundary, p.ctype, p.cid)
		b.Write(p.data)
		b.WriteString("\r\n")
	}
	fmt.Fprintf(&b, "--%s--\r\n", mtomBoundary)
	return b.Bytes()
}

func mtomContentType() string {
	return fmt.Sprintf(`multipart/related; type="application/xop+xml"; start="<%s>"; start-info="text/xml"; boundary=%q`, mtomRootCID, mtomBoundary)
}

// signedXOPRoot signs an envelope whose Body holds the base64 of data
// inline, then replaces that text by an xop:Include of href: the Body's
// XOP infoset (XOP 1.0 §3.2) is what was signed, so the digest verifies
// when href names a part holding data.
func signedXOPRoot(t *testing.T, p *partnerPKI, data []byte, href string) []byte {
	t.Helper()
	b64 := base64.StdEncoding.EncodeToString(data)
	env := `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body>` +
		`<f:Upload xmlns:f="urn:e2e:files"><f:data>` + b64 + `</f:data></f:Upload></soapenv:Body></soapenv:Envelope>`
	o := signer.DefaultOptions()
	o.Signer, o.Certificate = p.client.Key, p.client.Cert
	signed, err := signer.Secure([]byte(env), o)
	require.NoError(t, err)
	require.Equal(t, 1, bytes.Count(signed, []byte(b64)))
	return bytes.Replace(signed, []byte(b64), fmt.Appendf(nil, xopInclude, href), 1)
}

// attachmentData is deterministic binary content with every byte value.
func attachmentData(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31 + i>>8)
	}
	return b
}

// mtomConfig is one route with a signature policy, small MIME limits and
// a spool threshold low enough that every test attachment is spooled.
func (p *partnerPKI) mtomConfig(backend, spool string) string {
	return fmt.Sprintf(`
listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0}
shutdown: {drainTimeout: 10s}
mime: {maxParts: 4, maxRootSize: 256KiB, maxPartSize: 64KiB, maxTotalSize: 1MiB, spoolThreshold: 1KiB, spoolDir: %[3]s}
routes:
  - {name: mtom, path: /mtom, backend: %[1]s, policy: signed, maxBodyBytes: 2MiB}
policies:
  signed:
    require: [signature, timestamp]
    trust: {caFiles: [%[2]s]}
`, backend, p.ca, spool)
}

func TestMTOMSecuredRoute(t *testing.T) {
	p := newPartnerPKI(t)
	backend := newRecordingBackend(t, []byte(`<ok/>`), "text/xml")
	spool := t.TempDir()
	g := startGateway(t, p.mtomConfig(backend.URL, spool))
	data := attachmentData(20 << 10)
	cid := "cid:" + mtomAttCID
	rootPart := func(root []byte) mtomPart {
		return mtomPart{mtomRootCID, `application/xop+xml; charset=UTF-8; type="text/xml"`, root}
	}
	attPart := func(cid string, d []byte) mtomPart { return mtomPart{cid, "application/octet-stream", d} }
	good := signedXOPRoot(t, p, data, cid)

	t.Run("ok/signed package reaches the backend re-assembled", func(t *testing.T) {
		resp := g.post("/mtom", mtomContentType(), bytes.NewReader(mtomPackage([]mtomPart{rootPart(good), attPart(mtomAttCID, data)})))
		body := readAll(t, resp)
		require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
		got, h := backend.last()
		root, atts := readBackendPackage(t, h.Get("Content-Type"), got)
		assert.NotContains(t, string(root), "Security", "the backend gets the plaintext root without the Security header")
		assert.Contains(t, string(root), cid)
		require.Contains(t, atts, mtomAttCID)
		assert.True(t, bytes.Equal(data, atts[mtomAttCID]), "attachment bytes changed")
		assertSpoolEmpty(t, spool)
	})

	tampered := bytes.Clone(data)
	tampered[len(tampered)/2] ^= 1
	fails := []struct {
		name   string
		ctype  string
		body   []byte
		status int
	}{
		{"fail/no boundary", `multipart/related; type="application/xop+xml"; start="<` + mtomRootCID + `>"`,
			mtomPackage([]mtomPart{rootPart(good), attPart(mtomAttCID, data)}), http.StatusInternalServerError},
		{"fail/duplicate Content-ID", mtomContentType(),
			mtomPackage([]mtomPart{rootPart(good), attPart(mtomAttCID, data), attPart(mtomAttCID, data)}), http.StatusInternalServerError},
		{"fail/missing part", mtomContentType(),
			mtomPackage([]mtomPart{rootPart(signedXOPRoot(t, p, data, "cid:absent@e2e.example")), attPart(mtomAttCID, data)}), http.StatusInternalServerError},
		{"fail/extra unreferenced part", mtomContentType(),
			mtomPackage([]mtomPart{rootPart(good), attPart(mtomAttCID, data), attPart("extra@e2e.example", []byte("smuggled"))}), http.StatusInternalServerError},
		{"fail/href http", mtomContentType(),
			mtomPackage([]mtomPart{rootPart(signedXOPRoot(t, p, data, "http://attacker.example/"+mtomAttCID)), attPart(mtomAttCID, data)}), http.StatusInternalServerError},
		{"fail/href file", mtomContentType(),
			mtomPackage([]mtomPart{rootPart(signedXOPRoot(t, p, data, "file:///etc/passwd")), attPart(mtomAttCID, data)}), http.StatusInternalServerError},
		{"fail/tampered attachment byte", mtomContentType(),
			mtomPackage([]mtomPart{rootPart(good), attPart(mtomAttCID, tampered)}), http.StatusInternalServerError},
		{"fail/oversize part", mtomContentType(),
			mtomPackage([]mtomPart{rootPart(signedXOPRoot(t, p, attachmentData(80<<10), cid)), attPart(mtomAttCID, attachmentData(80<<10))}),
			http.StatusRequestEntityTooLarge},
	}
	for _, tt := range fails {
		t.Run(tt.name, func(t *testing.T) {
			before := backend.count()
			resp := g.post("/mtom", tt.ctype, bytes.NewReader(tt.body))
			body := readAll(t, resp)
			assert.Equal(t, tt.status, resp.StatusCode, string(body))
			if tt.status == http.StatusInternalServerError {
				assert.Contains(t, string(body), "wsse:InvalidSecurity", "the uniform WS-Security fault")
			}
			assert.Contains(t, string(body), "Fault>")
			assert.Equal(t, before, backend.count(), "the backend saw the request")
			assertSpoolEmpty(t, spool)
		})
	}

	t.Run("fail/client abort mid-upload", func(t *testing.T) {
		before := backend.count()
		body := mtomPackage([]mtomPart{rootPart(good), attPart(mtomAttCID, data)})
		u, err := url.Parse(g.data)
		require.NoError(t, err)
		conn, err := net.Dial("tcp", u.Host)
		require.NoError(t, err)
		fmt.Fprintf(conn, "POST /mtom HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", u.Host, mtomContentType(), len(body))
		_, err = conn.Write(body[:len(body)/2])
		require.NoError(t, err)
		time.Sleep(100 * time.Millisecond) // let the gateway spool the first half
		require.NoError(t, conn.Close())
		time.Sleep(200 * time.Millisecond)
		assert.Equal(t, before, backend.count(), "a truncated package was forwarded")
		assertSpoolEmpty(t, spool)
	})
}

// readBackendPackage parses what the backend got: the root and the
// attachments by Content-ID.
func readBackendPackage(t *testing.T, ctype string, body []byte) ([]byte, map[string][]byte) {
	t.Helper()
	media, params, err := mime.ParseMediaType(ctype)
	require.NoError(t, err)
	require.Equal(t, "multipart/related", media)
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	var root []byte
	atts := map[string][]byte{}
	for {
		part, err := mr.NextRawPart()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		b, err := io.ReadAll(part)
		require.NoError(t, err)
		cid := strings.Trim(part.Header.Get("Content-ID"), "<>")
		if root == nil {
			require.Equal(t, strings.Trim(params["start"], "<>"), cid, "the root comes first")
			root = b
			continue
		}
		atts[cid] = b
	}
	return root, atts
}

// assertSpoolEmpty checks that no spool directory outlived its request.
// The backend's transport closes the body just after its response, so an
// accepted request's spool may take a moment to go.
func assertSpoolEmpty(t *testing.T, dir string) {
	t.Helper()
	assert.Eventually(t, func() bool {
		entries, err := os.ReadDir(dir)
		return err == nil && len(entries) == 0
	}, 2*time.Second, 10*time.Millisecond, "spool directory %s not empty", dir)
}
