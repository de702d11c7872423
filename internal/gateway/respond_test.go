package gateway

import (
	"bytes"
	"encoding/base64"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/testnet"
)

const (
	okResponse = `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body>` +
		`<m:GetFilesResponse xmlns:m="urn:example:files"><m:Count>3</m:Count></m:GetFilesResponse></soapenv:Body></soapenv:Envelope>`
	faultResponse = `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><soapenv:Fault>` +
		`<faultcode>soapenv:Server</faultcode><faultstring>no files today</faultstring></soapenv:Fault></soapenv:Body></soapenv:Envelope>`
)

func soapBackend(t *testing.T, status int, ctype, body string) *httptest.Server {
	t.Helper()
	b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", ctype)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(b.Close)
	return b
}

// TestRespondBuffered: responses and SOAP faults come back with a standard
// WS-Security header that the partner's DOM engine verifies; what cannot
// be signed becomes a 502 fault, never an unsigned answer.
func TestRespondBuffered(t *testing.T) {
	k := newSigningPKI(t)
	verify := responseVerifier(t, k)
	tests := []struct {
		name      string
		status    int
		ctype     string
		body      string
		responses func(r *config.Responses)
		want      int    // status the partner gets
		result    string // response signing result counted
		check     func(t *testing.T, req, resp []byte)
	}{
		{name: "ok/response", status: 200, ctype: "text/xml; charset=utf-8", body: okResponse, want: 200, result: metrics.ResponseSigned},
		{name: "ok/fault-keeps-status", status: 500, ctype: "text/xml", body: faultResponse, want: 500, result: metrics.ResponseSigned,
			check: func(t *testing.T, _, resp []byte) { assert.Contains(t, string(resp), "no files today") }},
		{name: "ok/encrypted-for-requester", status: 200, ctype: "text/xml", body: okResponse, want: 200, result: metrics.ResponseSigned,
			responses: func(r *config.Responses) { r.EncryptForRequester, r.KeyReference = true, config.KeyRefIssuerSerial },
			check: func(t *testing.T, _, resp []byte) {
				assert.NotContains(t, string(resp), "GetFilesResponse", "the Body is encrypted")
			}},
		{name: "ok/empty-one-way", status: 202, ctype: "text/xml", want: 202, result: metrics.ResponsePassed},
		{name: "fail/too-large", status: 200, ctype: "text/xml", body: okResponse, want: 502, result: metrics.ResponseFailed,
			responses: func(r *config.Responses) { r.MaxBufferedSize = 64 }},
		{name: "fail/not-soap", status: 503, ctype: "text/html", body: "<html>down</html>", want: 502, result: metrics.ResponseFailed},
		{name: "fail/not-xml", status: 200, ctype: "text/xml", body: "<a>", want: 502, result: metrics.ResponseFailed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newSigningFront(t, soapBackend(t, tc.status, tc.ctype, tc.body).URL, k, tc.responses)
			req := signedRequest(t, k)
			resp := post(t, f.URL, req)
			out, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.Equal(t, tc.want, resp.StatusCode, "%s", out)
			assert.Equal(t, 1.0, f.signingResult(t, tc.result))
			switch {
			case tc.want == 502:
				assert.Contains(t, string(out), "could not be secured")
				assert.NotContains(t, string(out), "down", "the backend's answer is not relayed")
				assert.Equal(t, 1.0, f.outcome(t, metrics.ResponseSigningFailed))
				assert.Equal(t, 0.0, f.outcome(t, metrics.BackendFault), "a signing failure is not the backend's fault")
			case tc.result == metrics.ResponseSigned:
				res, err := verify(out)
				require.NoError(t, err, "%s", out)
				assert.Equal(t, k.gateway.Cert.Raw, res.Signer().Certificate.Raw)
				assert.True(t, res.SignedByTrusted(res.Body))
				assert.True(t, res.SignedByTrusted(res.Timestamp.Start))
				// The partner's check can fail: a flipped byte is caught.
				bad := bytes.Replace(out, []byte("<ds:SignatureValue>"), []byte("<ds:SignatureValue>A"), 1)
				_, err = verify(bad)
				require.Error(t, err)
			}
			if tc.check != nil {
				tc.check(t, req, out)
			}
		})
	}
}

// TestRespondSignatureConfirmation: the response confirms the value of the
// request's signature (WSS 1.1 §8.5). The repo's DOM engine does not
// process SignatureConfirmation (it verifies requests), so this checks the
// bytes.
func TestRespondSignatureConfirmation(t *testing.T) {
	k := newSigningPKI(t)
	f := newSigningFront(t, soapBackend(t, 200, "text/xml", okResponse).URL, k, func(r *config.Responses) { r.SignatureConfirmation = true })
	req := signedRequest(t, k)
	resp := post(t, f.URL, req)
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode, "%s", out)
	want := regexp.MustCompile(`<ds:SignatureValue>([^<]+)</ds:SignatureValue>`).FindSubmatch(req)[1]
	got := regexp.MustCompile(`<wsse11:SignatureConfirmation [^>]*Value="([^"]+)"`).FindSubmatch(out)
	require.NotNil(t, got, "%s", out)
	assert.Equal(t, string(want), string(got[1]))
	assert.Regexp(t, `<ds:Reference URI="#SC-`, string(out), "the confirmation is signed")
}

// mtomBackend answers with an MTOM package: a root whose Body includes
// each attachment, then the attachments. abortAfter > 0 cuts the
// connection after that many attachment bytes.
func mtomBackend(t *testing.T, atts [][]byte, abortAfter int) *httptest.Server {
	t.Helper()
	b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mw := multipart.NewWriter(w)
		w.Header().Set("Content-Type", `multipart/related; type="application/xop+xml"; start="<root@backend>"; start-info="text/xml"; boundary=`+mw.Boundary())
		var root strings.Builder
		root.WriteString(`<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><m:Files xmlns:m="urn:example:files">`)
		for i := range atts {
			root.WriteString(`<m:File><xop:Include xmlns:xop="http://www.w3.org/2004/08/xop/include" href="cid:f` + string(rune('0'+i)) + `@backend"/></m:File>`)
		}
		root.WriteString(`</m:Files></soapenv:Body></soapenv:Envelope>`)
		h := textproto.MIMEHeader{}
		h.Set("Content-Type", `application/xop+xml; charset=UTF-8; type="text/xml"`)
		h.Set("Content-ID", "<root@backend>")
		pw, _ := mw.CreatePart(h)
		_, _ = io.WriteString(pw, root.String())
		for i, a := range atts {
			h := textproto.MIMEHeader{}
			h.Set("Content-Type", "application/octet-stream")
			h.Set("Content-ID", "<f"+string(rune('0'+i))+"@backend>")
			pw, _ := mw.CreatePart(h)
			if abortAfter > 0 {
				_, _ = pw.Write(a[:abortAfter])
				w.(http.Flusher).Flush()
				panic(http.ErrAbortHandler) // the backend dies mid-attachment
			}
			_, _ = pw.Write(a)
		}
		_ = mw.Close()
	}))
	t.Cleanup(b.Close)
	return b
}

// TestRespondStreaming: an MTOM response is signed while it streams in
// the trailing format (streamFormat trailing); the partner reassembles the
// trailing signature and verifies with the DOM engine.
func TestRespondStreaming(t *testing.T) {
	k := newSigningPKI(t)
	verify := responseVerifier(t, k)
	atts := [][]byte{bytes.Repeat([]byte("attachment-one "), 20000), {0, 1, 2, 0xff}}
	f := newSigningFront(t, mtomBackend(t, atts, 0).URL, k, func(r *config.Responses) {
		r.Mode, r.StreamFormat = config.ResponseStreaming, config.StreamTrailing
	})
	resp := post(t, f.URL, signedRequest(t, k))
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode, "%s", out)
	assert.Empty(t, resp.Header.Get("Content-Length"), "streamed")
	ct := resp.Header.Get("Content-Type")
	assert.Contains(t, ct, `start="<root@backend>"`)
	msg, cids := reassembleMTOM(t, ct, out)
	assert.Equal(t, []string{"root@backend", "f0@backend", "f1@backend"}, cids[:3])
	assert.Contains(t, cids[3], "@wssgw", "the signature is the last part")
	assert.Contains(t, string(msg), base64.StdEncoding.EncodeToString(atts[1]))
	res, err := verify(msg)
	require.NoError(t, err, "%s", msg)
	assert.Equal(t, k.gateway.Cert.Raw, res.Signer().Certificate.Raw)
	assert.True(t, res.SignedByTrusted(res.Body))
	assert.Equal(t, 1.0, f.signingResult(t, metrics.ResponseSigned))

	// And the partner's check fails when an attachment byte changes.
	bad := bytes.Replace(out, []byte("attachment-one attachment-one"), []byte("attachment-one attachment-onE"), 1)
	msg, _ = reassembleMTOM(t, ct, bad)
	_, err = verify(msg)
	require.Error(t, err)
}

// TestRespondStreamingAbort: a backend that dies mid-attachment leaves the
// partner with a broken response and no signature part.
func TestRespondStreamingAbort(t *testing.T) {
	k := newSigningPKI(t)
	atts := [][]byte{bytes.Repeat([]byte("x"), 100000)}
	f := newSigningFront(t, mtomBackend(t, atts, 50000).URL, k, func(r *config.Responses) { r.Mode = config.ResponseStreaming })
	resp := post(t, f.URL, signedRequest(t, k))
	require.Equal(t, 200, resp.StatusCode, "headers went out before the abort")
	out, err := io.ReadAll(resp.Body)
	require.Error(t, err, "the partner sees a cut response")
	assert.Contains(t, string(out), "<root@backend>", "the root part went out first")
	assert.NotContains(t, string(out), "SignedInfo", "no signature over partial data")
	assert.NotContains(t, string(out), "@wssgw>", "no signature part")
	assert.Eventually(t, func() bool { return f.signingResult(t, metrics.ResponseAborted) == 1 }, timeout, tick)
	assert.Eventually(t, func() bool { return f.outcome(t, metrics.BackendAborted) == 1 }, timeout, tick)
}

const (
	timeout = 5e9 // 5 s
	tick    = 1e7 // 10 ms
)

// TestRespondStreamingFirstByte: the root part reaches the partner while
// the backend is still sending, so the time to first byte does not depend
// on the response size (DESIGN.md §6). The default format with a signed
// RSA requester is strict-xop: the encrypted signature comes last.
func TestRespondStreamingFirstByte(t *testing.T) {
	k := newSigningPKI(t)
	release := make(chan struct{})
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mw := multipart.NewWriter(w)
		w.Header().Set("Content-Type", `multipart/related; type="application/xop+xml"; start-info="text/xml"; boundary=`+mw.Boundary())
		h := textproto.MIMEHeader{}
		h.Set("Content-Type", `application/xop+xml; type="text/xml"`)
		pw, _ := mw.CreatePart(h)
		_, _ = io.WriteString(pw, `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body>`+
			`<m:F xmlns:m="urn:x"><xop:Include xmlns:xop="http://www.w3.org/2004/08/xop/include" href="cid:a@x"/></m:F></soapenv:Body></soapenv:Envelope>`)
		h = textproto.MIMEHeader{}
		h.Set("Content-ID", "<a@x>")
		pw, _ = mw.CreatePart(h)
		_, _ = pw.Write(bytes.Repeat([]byte("a"), 1000))
		w.(http.Flusher).Flush()
		select { // the rest only once the partner has the root part
		case <-release:
		case <-r.Context().Done():
			return
		}
		_, _ = pw.Write(bytes.Repeat([]byte("b"), 1000))
		_ = mw.Close()
	}))
	t.Cleanup(backend.Close)
	f := newSigningFront(t, backend.URL, k, func(r *config.Responses) { r.Mode = config.ResponseStreaming })
	resp := post(t, f.URL, signedRequest(t, k))
	require.Equal(t, 200, resp.StatusCode)
	var got []byte
	buf := make([]byte, 4096)
	deadline := time.AfterFunc(5*time.Second, func() { resp.Body.Close() })
	defer deadline.Stop()
	for !bytes.Contains(got, []byte("</soapenv:Envelope>")) {
		n, err := resp.Body.Read(buf)
		got = append(got, buf[:n]...)
		require.NoError(t, err, "the root part must arrive before the backend finishes")
	}
	assert.Contains(t, string(got), "<wsu:Timestamp", "the root part carries the Security header")
	close(release)
	rest, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Contains(t, string(rest), "Content-Type: "+signer.CipherPartType, "the encrypted signature comes last")
}

// TestRespondBackendError: when the backend is down or breaks off on a
// signing route, the partner gets the gateway's own unsigned fault, and
// the response-signing counter says backend_error, never signed (nor
// failed: there was no answer to sign).
func TestRespondBackendError(t *testing.T) {
	k := newSigningPKI(t)
	down := struct{ URL string }{"http://" + testnet.RefusedAddr(t)} // the proxy fails to connect
	brokeOff := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/xml")
		w.Header().Set("Content-Length", "1000")
		_, _ = io.WriteString(w, okResponse[:40])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // fewer bytes than announced
	}))
	t.Cleanup(brokeOff.Close)
	for _, tc := range []struct {
		name, backend, mode string
	}{
		{"fail/down-buffered", down.URL, config.ResponseBuffered},
		{"fail/down-streaming", down.URL, config.ResponseStreaming},
		{"fail/broke-off-buffered", brokeOff.URL, config.ResponseBuffered},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newSigningFront(t, tc.backend, k, func(r *config.Responses) { r.Mode = tc.mode })
			resp := post(t, f.URL, signedRequest(t, k))
			out, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.Equal(t, http.StatusBadGateway, resp.StatusCode, "%s", out)
			assert.NotContains(t, string(out), "Signature", "the gateway's own fault is not signed")
			assert.Equal(t, 1.0, f.signingResult(t, metrics.ResponseBackendError))
			for _, r := range []string{metrics.ResponseSigned, metrics.ResponseFailed, metrics.ResponsePassed, metrics.ResponseAborted} {
				assert.Zero(t, f.signingResult(t, r), r)
			}
			assert.Equal(t, 1.0, f.outcome(t, metrics.BackendUnavailable))
		})
	}
}
