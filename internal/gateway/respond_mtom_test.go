package gateway

import (
	"bytes"
	"context"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/dom"
	"github.com/wssgw/wssgw/internal/metrics"
	wmime "github.com/wssgw/wssgw/internal/mime"
	"github.com/wssgw/wssgw/internal/reload"
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// packageVerifier is the partner's side for a signed MTOM response: the
// package read as the gateway reads requests, its root verified by the
// repo's DOM engine over the XOP infoset (issue 15).
func packageVerifier(t *testing.T, k *signingPKI) func(ctype string, body io.Reader) (*wss.Result, error) {
	t.Helper()
	p := config.DefaultPolicy()
	p.Replay = "off"
	p.Trust.CAFiles = []string{k.caFile}
	pol, err := wss.Compile("client", p, nil, reload.Options{})
	require.NoError(t, err)
	e, err := dom.New(xmlscan.DefaultConfig())
	require.NoError(t, err)
	return func(ctype string, body io.Reader) (*wss.Result, error) {
		pkg, err := wmime.Read(context.Background(), body, ctype, wmime.DefaultLimits())
		if err != nil {
			return nil, err
		}
		defer pkg.Close()
		res, _, err := pol.VerifyAttachments(context.Background(), e, pkg.RootBytes, wss.PackageAttachments(pkg, ""), time.Now())
		return res, err
	}
}

// TestRespondBufferedMTOM: buffered mode signs MTOM responses (a CXF
// backend with MTOM on answers multipart even without attachments) with a
// standard Security header over the XOP infoset; the attachments go out
// unchanged after the signed root, and changing one breaks the signature.
func TestRespondBufferedMTOM(t *testing.T) {
	k := newSigningPKI(t)
	verify := packageVerifier(t, k)
	for _, tc := range []struct {
		name string
		atts [][]byte
	}{
		{"ok/root-only", nil},
		{"ok/one-small", [][]byte{{0, 1, 2, 0xff}}},
		{"ok/spooled-and-small", [][]byte{bytes.Repeat([]byte("attachment-one "), 40000), {0, 1, 2, 0xff}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newSigningFront(t, mtomBackend(t, tc.atts, 0).URL, k, nil)
			resp := post(t, f.URL, signedRequest(t, k))
			out, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.Equal(t, 200, resp.StatusCode, "%s", out)
			ct := resp.Header.Get("Content-Type")
			assert.Contains(t, ct, `type="application/xop+xml"`)
			assert.Contains(t, ct, `start="<root@backend>"`)
			assert.Equal(t, 1.0, f.signingResult(t, metrics.ResponseSigned))

			res, err := verify(ct, bytes.NewReader(out))
			require.NoError(t, err, "%s", out)
			assert.Equal(t, k.gateway.Cert.Raw, res.Signer().Certificate.Raw)
			assert.True(t, res.SignedByTrusted(res.Body))
			assert.True(t, res.SignedByTrusted(res.Timestamp.Start))

			parts := packageParts(t, ct, out)
			require.Len(t, parts, 1+len(tc.atts))
			assert.Contains(t, string(parts[0]), "<wsse:Security", "a standard header in the root")
			assert.Equal(t, len(tc.atts), strings.Count(string(parts[0]), "<xop:Include"), "the includes stay")
			for i, a := range tc.atts {
				assert.Equal(t, a, parts[i+1], "attachment %d unchanged", i)
			}
			if len(tc.atts) == 0 {
				return
			}
			// The partner's check can fail: a changed attachment byte is caught.
			last := tc.atts[len(tc.atts)-1]
			i := bytes.LastIndex(out, last)
			require.Positive(t, i)
			bad := bytes.Clone(out)
			bad[i+1] ^= 0x20
			_, err = verify(ct, bytes.NewReader(bad))
			require.Error(t, err)
		})
	}
}

// TestRespondBufferedMTOMRefused: what buffered mode cannot sign as a
// stock stack verifies is a 502 fault, never an unsigned part.
func TestRespondBufferedMTOMRefused(t *testing.T) {
	k := newSigningPKI(t)
	unreferenced := rawBackend(t, `multipart/related; type="application/xop+xml"; start="<r@b>"; start-info="text/xml"; boundary=B`,
		"--B\r\nContent-ID: <r@b>\r\nContent-Type: application/xop+xml; type=\"text/xml\"\r\n\r\n"+okResponse+
			"\r\n--B\r\nContent-ID: <extra@b>\r\n\r\nunsigned\r\n--B--\r\n")
	inHeader := rawBackend(t, `multipart/related; type="application/xop+xml"; start="<r@b>"; start-info="text/xml"; boundary=B`,
		"--B\r\nContent-ID: <r@b>\r\nContent-Type: application/xop+xml; type=\"text/xml\"\r\n\r\n"+
			`<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Header><h:X xmlns:h="urn:h">`+
			`<xop:Include xmlns:xop="http://www.w3.org/2004/08/xop/include" href="cid:a@b"/></h:X></soapenv:Header><soapenv:Body/></soapenv:Envelope>`+
			"\r\n--B\r\nContent-ID: <a@b>\r\n\r\nunsigned\r\n--B--\r\n")
	swaXOP := rawBackend(t, `multipart/related; type="text/xml"; start="<r@b>"; boundary=B`,
		"--B\r\nContent-ID: <r@b>\r\nContent-Type: text/xml\r\n\r\n"+
			`<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><m:F xmlns:m="urn:m">`+
			`<xop:Include xmlns:xop="http://www.w3.org/2004/08/xop/include" href="cid:a@b"/></m:F></soapenv:Body></soapenv:Envelope>`+
			"\r\n--B\r\nContent-ID: <a@b>\r\n\r\nunsigned\r\n--B--\r\n")
	for _, tc := range []struct {
		name, backend string
		responses     func(r *config.Responses)
	}{
		{"fail/malformed", rawBackend(t, `multipart/related; type="application/xop+xml"; boundary=x`, "--x--").URL, nil},
		{"fail/unreferenced-attachment", unreferenced.URL, nil},
		{"fail/include-outside-body", inHeader.URL, nil},
		{"fail/xop-include-in-swa", swaXOP.URL, nil},
		{"fail/encrypt-for-requester", mtomBackend(t, [][]byte{[]byte("x")}, 0).URL, func(r *config.Responses) {
			r.EncryptForRequester, r.KeyReference = true, config.KeyRefIssuerSerial
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newSigningFront(t, tc.backend, k, tc.responses)
			resp := post(t, f.URL, signedRequest(t, k))
			out, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.Equal(t, http.StatusBadGateway, resp.StatusCode, "%s", out)
			assert.Contains(t, string(out), "could not be secured")
			assert.NotContains(t, string(out), "unsigned")
			assert.Equal(t, 1.0, f.signingResult(t, metrics.ResponseFailed))
		})
	}
}

// TestRespondBufferedMTOMMemory: a 64 MiB attachment is spooled, digested
// and re-emitted from disk: the gateway's heap grows by a small fraction
// of it, and the response still verifies.
func TestRespondBufferedMTOMMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("64 MiB through the gateway")
	}
	const size = 64 << 20
	k := newSigningPKI(t)
	f := newSigningFront(t, bigMTOMBackend(t, size).URL, k, nil)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	peak := before.HeapInuse
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() { // sample the heap while the response flows
		defer close(sampled)
		var m runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapInuse)
		}
	}()
	resp := post(t, f.URL, signedRequest(t, k))
	require.Equal(t, 200, resp.StatusCode)
	saved := filepath.Join(t.TempDir(), "response")
	file, err := os.Create(saved)
	require.NoError(t, err)
	n, err := io.Copy(file, resp.Body)
	require.NoError(t, err)
	close(stop)
	<-sampled
	require.NoError(t, file.Close())
	require.Greater(t, n, int64(size))
	growth := int64(peak) - int64(before.HeapInuse)
	t.Logf("heap in use grew by %.1f MiB at most for a %d MiB attachment", float64(growth)/(1<<20), size>>20)
	assert.Less(t, growth, int64(size/4), "the attachment is not held in memory")

	file, err = os.Open(saved)
	require.NoError(t, err)
	defer file.Close()
	_, err = packageVerifier(t, k)(resp.Header.Get("Content-Type"), file)
	require.NoError(t, err)
}

// bigMTOMBackend answers one MTOM package with a size-byte attachment
// written in chunks, never held whole.
func bigMTOMBackend(t *testing.T, size int) *httptest.Server {
	t.Helper()
	b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mw := multipart.NewWriter(w)
		w.Header().Set("Content-Type", `multipart/related; type="application/xop+xml"; start="<root@backend>"; start-info="text/xml"; boundary=`+mw.Boundary())
		h := textproto.MIMEHeader{}
		h.Set("Content-Type", `application/xop+xml; charset=UTF-8; type="text/xml"`)
		h.Set("Content-ID", "<root@backend>")
		pw, _ := mw.CreatePart(h)
		_, _ = io.WriteString(pw, `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><m:File xmlns:m="urn:example:files">`+
			`<xop:Include xmlns:xop="http://www.w3.org/2004/08/xop/include" href="cid:big@backend"/></m:File></soapenv:Body></soapenv:Envelope>`)
		h = textproto.MIMEHeader{}
		h.Set("Content-Type", "application/octet-stream")
		h.Set("Content-ID", "<big@backend>")
		pw, _ = mw.CreatePart(h)
		chunk := bytes.Repeat([]byte("0123456789abcdef"), 4096)
		for n := 0; n < size; n += len(chunk) {
			_, _ = pw.Write(chunk)
		}
		_ = mw.Close()
	}))
	t.Cleanup(b.Close)
	return b
}

// rawBackend answers every request with body as is.
func rawBackend(t *testing.T, ctype, body string) *httptest.Server {
	t.Helper()
	b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", ctype)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(b.Close)
	return b
}

// packageParts returns the contents of a package's parts in order.
func packageParts(t *testing.T, ctype string, body []byte) [][]byte {
	t.Helper()
	i := strings.Index(ctype, "boundary=")
	require.Positive(t, i)
	boundary := strings.Trim(strings.SplitN(ctype[i+len("boundary="):], ";", 2)[0], `"`)
	r := multipart.NewReader(bytes.NewReader(body), boundary)
	var out [][]byte
	for {
		p, err := r.NextRawPart()
		if err == io.EOF {
			return out
		}
		require.NoError(t, err)
		b, err := io.ReadAll(p)
		require.NoError(t, err)
		out = append(out, b)
	}
}

// swaParts are an SwA response's attachments: text with bare LF line ends
// (the content transform digests them as CR LF), XML, and binary.
var swaParts = []struct{ cid, ctype, body string }{
	{"text@backend", "text/plain; charset=UTF-8", "line 1\nline 2\n"},
	{"xml@backend", "application/xml", `<r xmlns="urn:r"><n a='1'>v</n></r>`},
	{"bin@backend", "application/octet-stream", "\x00\x01\xfe\xff binary"},
}

// swaBackend answers an SwA package: a plain SOAP root and swaParts.
func swaBackend(t *testing.T) *httptest.Server {
	t.Helper()
	var b strings.Builder
	b.WriteString("--B\r\nContent-ID: <root@backend>\r\nContent-Type: text/xml; charset=UTF-8\r\n\r\n" + okResponse)
	for _, p := range swaParts {
		b.WriteString("\r\n--B\r\nContent-ID: <" + p.cid + ">\r\nContent-Type: " + p.ctype + "\r\n\r\n" + p.body)
	}
	b.WriteString("\r\n--B--\r\n")
	return rawBackend(t, `multipart/related; type="text/xml"; start="<root@backend>"; boundary=B`, b.String())
}

// TestRespondBufferedSwA: buffered mode signs an SwA response with one
// cid: Reference per attachment (Attachment-Content-Signature-Transform);
// the parts go out unchanged, and a changed byte in any of them breaks
// the signature.
func TestRespondBufferedSwA(t *testing.T) {
	k := newSigningPKI(t)
	verify := packageVerifier(t, k)
	f := newSigningFront(t, swaBackend(t).URL, k, nil)
	resp := post(t, f.URL, signedRequest(t, k))
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode, "%s", out)
	ct := resp.Header.Get("Content-Type")
	assert.Contains(t, ct, `type="text/xml"`)
	parts := packageParts(t, ct, out)
	require.Len(t, parts, 1+len(swaParts))
	for i, p := range swaParts {
		assert.Equal(t, p.body, string(parts[i+1]), "part %s unchanged", p.cid)
		assert.Contains(t, string(parts[0]), `URI="cid:`+p.cid+`"`)
	}
	res, err := verify(ct, bytes.NewReader(out))
	require.NoError(t, err, "%s", out)
	assert.True(t, res.SignedByTrusted(res.Body))
	assert.Equal(t, 1.0, f.signingResult(t, metrics.ResponseSigned))
	for _, tamper := range []struct{ name, old, new string }{
		{"fail/text", "line 2", "line 3"},
		{"fail/xml", "a='1'", "a='2'"},
		{"fail/binary", "\xff binary", "\xff Binary"},
	} {
		t.Run(tamper.name, func(t *testing.T) {
			bad := bytes.Replace(out, []byte(tamper.old), []byte(tamper.new), 1)
			require.NotEqual(t, out, bad)
			_, err := verify(ct, bytes.NewReader(bad))
			require.Error(t, err)
		})
	}
}

// TestRespondBufferedMTOMAbort: a backend that dies mid-attachment is a
// backend error (the partner gets the gateway's unsigned 502 fault), not
// a signing failure, and nothing of the package is relayed.
func TestRespondBufferedMTOMAbort(t *testing.T) {
	k := newSigningPKI(t)
	f := newSigningFront(t, mtomBackend(t, [][]byte{bytes.Repeat([]byte("x"), 100000)}, 50000).URL, k, nil)
	resp := post(t, f.URL, signedRequest(t, k))
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusBadGateway, resp.StatusCode, "%s", out)
	assert.NotContains(t, string(out), "root@backend")
	assert.Equal(t, 1.0, f.signingResult(t, metrics.ResponseBackendError))
	assert.Zero(t, f.signingResult(t, metrics.ResponseSigned))
	assert.Zero(t, f.signingResult(t, metrics.ResponseFailed))
}

// TestRespondBufferedMTOMSpoolRemoved: the attachments are spooled under
// mime.spoolDir while the response is signed and sent, and the spool is
// gone once the partner has it, signed or refused.
func TestRespondBufferedMTOMSpoolRemoved(t *testing.T) {
	k := newSigningPKI(t)
	for _, tc := range []struct {
		name, backend string
		want          int
	}{
		{"ok/signed", mtomBackend(t, [][]byte{bytes.Repeat([]byte("s"), 4096)}, 0).URL, http.StatusOK},
		{"fail/refused", mtomBackend(t, [][]byte{bytes.Repeat([]byte("s"), 4096)}, 0).URL, http.StatusBadGateway},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spool := t.TempDir()
			f := newSigningFrontConfig(t, tc.backend, k, func(r *config.Responses) {
				r.EncryptForRequester = tc.want != http.StatusOK
			}, func(c *config.Config) { c.MIME.SpoolDir, c.MIME.SpoolThreshold = spool, 16 })
			resp := post(t, f.URL, signedRequest(t, k))
			_, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.Equal(t, tc.want, resp.StatusCode)
			assert.Eventually(t, func() bool {
				left, err := os.ReadDir(spool)
				return err == nil && len(left) == 0
			}, timeout, tick, "the spool is removed")
		})
	}
}
