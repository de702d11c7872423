package e2e

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	stdmime "mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/soap"
	"github.com/wssgw/wssgw/internal/testpeer"
)

// respondAnswer is the backend's SOAP response on the buffered routes.
const respondAnswer = `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body>` +
	`<ord:PlaceOrderResponse xmlns:ord="urn:example:orders"><ord:status>accepted</ord:status><ord:id>A-4711</ord:id>` +
	`</ord:PlaceOrderResponse></soapenv:Body></soapenv:Envelope>`

// respondFault is the backend's SOAP 1.1 fault on /fault (status 500).
const respondFault = `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><soapenv:Fault>` +
	`<faultcode>soapenv:Server</faultcode><faultstring>order book closed</faultstring></soapenv:Fault></soapenv:Body></soapenv:Envelope>`

// respondMTOMRoot is the root of the backend's MTOM response: the Body
// XOP-includes the attachment.
var respondMTOMRoot = `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body>` +
	`<f:DownloadResponse xmlns:f="urn:e2e:files"><f:data>` + fmt.Sprintf(xopInclude, "cid:"+mtomAttCID) +
	`</f:data></f:DownloadResponse></soapenv:Body></soapenv:Envelope>`

// respondBackend answers by path: /fault a SOAP fault with status 500,
// /mtom and /bufferedmtom an MTOM package carrying att, /abort the first part of that
// package and then a cut connection (hijack and close), anything else
// respondAnswer.
func respondBackend(t *testing.T, att []byte) *httptest.Server {
	t.Helper()
	pkg := mtomPackage([]mtomPart{
		{mtomRootCID, `application/xop+xml; charset=UTF-8; type="text/xml"`, []byte(respondMTOMRoot)},
		{mtomAttCID, "application/octet-stream", att},
	})
	b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		switch r.URL.Path {
		case "/fault":
			w.Header().Set("Content-Type", "text/xml; charset=utf-8")
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = io.WriteString(w, respondFault)
		case "/mtom", "/bufferedmtom":
			w.Header().Set("Content-Type", mtomContentType())
			w.Header().Set("Content-Length", strconv.Itoa(len(pkg)))
			_, _ = w.Write(pkg)
		case "/abort":
			abortMidPackage(w, pkg)
		default:
			w.Header().Set("Content-Type", "text/xml; charset=utf-8")
			_, _ = io.WriteString(w, respondAnswer)
		}
	}))
	t.Cleanup(b.Close)
	return b
}

// abortMidPackage announces all of pkg, sends its first half (the root
// and part of the attachment) and closes the connection.
func abortMidPackage(w http.ResponseWriter, pkg []byte) {
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", mtomContentType(), len(pkg))
	_, _ = buf.Write(pkg[:len(pkg)/2])
	_ = buf.Flush()
}

// respondConfig is a gateway in front of backend whose routes require a
// trusted signature and sign their responses: /buffered and /fault
// buffered, /confirm with SignatureConfirmation, /encrypted encrypted for
// the requester, /bufferedmtom an MTOM package buffered (issue 15), /mtom
// and /abort streaming.
func (p *partnerPKI) respondConfig(backend string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "listen: 127.0.0.1:0\nadmin: {listen: 127.0.0.1:0}\nshutdown: {drainTimeout: 10s}\nroutes:\n")
	for route, policy := range map[string]string{"buffered": "signed", "fault": "signed", "confirm": "confirm",
		"encrypted": "encrypt", "bufferedmtom": "signed", "mtom": "stream", "abort": "stream"} {
		fmt.Fprintf(&b, "  - {name: %[1]s, path: /%[1]s, backend: %[2]s, policy: %[3]s}\n", route, backend, policy)
	}
	b.WriteString("policies:\n")
	for policy, extra := range map[string]string{"signed": "", "confirm": ", signatureConfirmation: true",
		"encrypt": ", encryptForRequester: true", "stream": ", mode: streaming, streamFormat: trailing"} {
		fmt.Fprintf(&b, "  %s:\n    require: [signature, timestamp]\n    trust: {caFiles: [%s]}\n"+
			"    responses: {sign: true, certFile: %s, keyFile: %s%s}\n", policy, p.ca, p.server.CertFile, p.server.KeyFile, extra)
	}
	return b.String()
}

// respondRoutes are the routes a WSS4J-signed request is sent to, one
// request each.
var respondRoutes = []string{"buffered", "fault", "confirm", "encrypted", "bufferedmtom", "mtom", "abort"}

// TestWSS4JRespond: Apache WSS4J signs requests, the running gateway
// forwards them to a real backend and signs what comes back — buffered
// answers, a SOAP fault, SignatureConfirmation, the Body encrypted for
// the requester, an MTOM package signed buffered over its XOP infoset
// (issue 15), and an MTOM package streamed with its ds:Signature in the
// last part — and WSS4J verifies every response (signed Body and
// Timestamp), and rejects each once a byte changed. A backend that breaks
// off mid-package leaves the client a package without a signature part.
func TestWSS4JRespond(t *testing.T) {
	jar := testpeer.Jar(t, "wss4j")
	pki := newPartnerPKI(t)
	att := attachmentData(3 << 20)
	gw := startGateway(t, pki.respondConfig(respondBackend(t, att).URL))

	plain := filepath.Join(pki.dir, "request.plain.xml")
	require.NoError(t, os.WriteFile(plain, plainEnvelope(soap.NS11, payload(1<<10)), 0o600))
	var signJobs []testpeer.Job
	for _, r := range respondRoutes {
		signJobs = append(signJobs, testpeer.Job{ID: r, Args: []string{"sign", "--profile", "sign-bst", "--in", plain,
			"--out", filepath.Join(pki.dir, r+".request.xml"), "--key", pki.client.KeyFile, "--cert", pki.client.CertFile}})
	}
	for id, r := range wss4jBatch(t, jar, signJobs) {
		require.True(t, r.OK, "WSS4J sign %s: %s", id, r.Error)
	}
	request := func(route string) []byte {
		b, err := os.ReadFile(filepath.Join(pki.dir, route+".request.xml"))
		require.NoError(t, err)
		return b
	}

	// The responses, saved for the peer: file and extra verify flags by
	// job id; the jobs named fail/ must be rejected.
	type check struct {
		file string
		args []string
	}
	checks := map[string]check{}
	save := func(name string, data []byte) string {
		f := filepath.Join(pki.dir, strings.ReplaceAll(name, "/", "_"))
		require.NoError(t, os.WriteFile(f, data, 0o600))
		return f
	}
	buffered := func(route string, status int) []byte {
		resp := gw.post("/"+route, contentType("1.1"), bytes.NewReader(request(route)))
		body := readAll(t, resp)
		require.Equal(t, status, resp.StatusCode, "%s\n%s", body, lastLog(gw))
		require.Contains(t, string(body), "wsse:Security", "the response is signed")
		return body
	}

	resp := buffered("buffered", http.StatusOK)
	assert.Contains(t, string(resp), "<ord:id>A-4711</ord:id>", "the backend's answer comes back")
	checks["ok/buffered"] = check{save("buffered.xml", resp), nil}
	checks["fail/buffered tampered"] = check{save("tampered.xml", bytes.Replace(resp, []byte("A-4711"), []byte("A-4712"), 1)), nil}

	resp = buffered("fault", http.StatusInternalServerError)
	assert.Contains(t, string(resp), "order book closed")
	checks["ok/fault"] = check{save("fault.xml", resp), nil}

	resp = buffered("confirm", http.StatusOK)
	confirmed := signatureValueOf(t, request("confirm"))
	checks["ok/buffered signature confirmation"] = check{save("confirm.xml", resp), []string{"--expect-confirmation", confirmed}}
	checks["fail/confirmation of another request"] = check{save("confirm-other.xml", resp),
		[]string{"--expect-confirmation", signatureValueOf(t, request("buffered"))}}

	resp = buffered("encrypted", http.StatusOK)
	assert.NotContains(t, string(resp), "A-4711", "the Body is encrypted")
	checks["ok/encrypted for requester"] = check{save("encrypted.xml", resp),
		[]string{"--cert", pki.client.CertFile, "--key", pki.client.KeyFile, "--require", "encrypted-body"}}

	// Buffered MTOM (issue 15): the standard header in the root part, the
	// Body signed over its XOP infoset, the attachment unchanged; WSS4J
	// verifies it as a CXF client with MTOM on would.
	bresp := gw.post("/bufferedmtom", contentType("1.1"), bytes.NewReader(request("bufferedmtom")))
	bpkg := readAll(t, bresp)
	require.Equal(t, http.StatusOK, bresp.StatusCode, "%.2000s\n%s", bpkg, lastLog(gw))
	bct := bresp.Header.Get("Content-Type")
	bparts := respondParts(t, bct, bpkg)
	require.Len(t, bparts, 2, "root and attachment, no signature part")
	assert.Contains(t, string(bparts[0]), "wsse:Security")
	assert.Equal(t, att, bparts[1], "the attachment passes unchanged")
	bflipped := bytes.Clone(bpkg)
	bat := bytes.Index(bflipped, att[:256])
	require.GreaterOrEqual(t, bat, 0)
	bflipped[bat+1<<20] ^= 1
	checks["ok/buffered MTOM"] = check{save("buffered-mtom.mime", bpkg), []string{"--content-type", bct}}
	checks["fail/buffered MTOM attachment byte flipped"] = check{save("buffered-mtom-flipped.mime", bflipped), []string{"--content-type", bct}}

	pkg, ct := respondStream(t, gw, request("mtom"))
	mtomFile := save("mtom.mime", pkg)
	flipped := bytes.Clone(pkg)
	at := bytes.Index(flipped, att[:256]) // the attachment's content
	require.GreaterOrEqual(t, at, 0)
	flipped[at+1<<20] ^= 1
	flippedFile := save("mtom-flipped.mime", flipped)
	mime := []string{"--content-type", ct, "--trailing-signature"}
	checks["ok/streaming MTOM"] = check{mtomFile, mime}
	checks["fail/streaming MTOM attachment byte flipped"] = check{flippedFile, mime}

	var jobs []testpeer.Job
	for id, c := range checks {
		in := []string{"--in", c.file}
		if strings.HasSuffix(c.file, ".mime") {
			in = []string{"--mime", c.file}
		}
		args := append(append([]string{"verify"}, in...), "--ca", pki.ca, "--require", "signed-body,signed-timestamp")
		jobs = append(jobs, testpeer.Job{ID: id, Args: append(args, c.args...)})
	}
	results := wss4jBatch(t, jar, jobs)
	for _, id := range slices.Sorted(maps.Keys(checks)) {
		t.Run(id, func(t *testing.T) {
			r := results[id]
			if strings.HasPrefix(id, "fail/") {
				assert.False(t, r.OK, "WSS4J accepted it")
				assert.Equal(t, 1, r.Exit, "%s", r.Error)
				t.Logf("rejected: %s", r.Error)
				return
			}
			assert.True(t, r.OK, "WSS4J: %s", r.Error)
		})
	}

	t.Run("ok/wssgw verify streaming MTOM", func(t *testing.T) {
		cfg := pki.clientVerifyConfig(t)
		out, stderr, code := runCLI(t, nil, "verify", "-c", cfg, "--content-type", ct, mtomFile)
		require.Equal(t, 0, code, stderr)
		assert.Contains(t, out, "DownloadResponse")
		_, stderr, code = runCLI(t, nil, "verify", "-c", cfg, "--content-type", ct, flippedFile)
		assert.Equal(t, 1, code)
		assert.Contains(t, stderr, "rejected: digest")
	})
	t.Run("ok/wssgw verify signature confirmation", func(t *testing.T) {
		cfg := pki.clientVerifyConfig(t)
		_, stderr, code := runCLI(t, nil, "verify", "-c", cfg, "--expect-confirmation", confirmed, checks["ok/buffered signature confirmation"].file)
		assert.Equal(t, 0, code, stderr)
	})
	t.Run("fail/backend abort mid-response", func(t *testing.T) {
		respondAbort(t, gw, request("abort"))
	})
}

// respondStream posts req to /mtom and returns the streamed package and
// its Content-Type, after checking its layout: the root first, the
// attachment with its bytes, and a last part holding the ds:Signature.
func respondStream(t *testing.T, gw *gateway, req []byte) ([]byte, string) {
	t.Helper()
	resp := gw.post("/mtom", contentType("1.1"), bytes.NewReader(req))
	body := readAll(t, resp)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%.2000s\n%s", body, lastLog(gw))
	ct := resp.Header.Get("Content-Type")
	parts := respondParts(t, ct, body)
	require.GreaterOrEqual(t, len(parts), 3, "root, attachment, signature")
	assert.Contains(t, string(parts[0]), "wsse:Security")
	assert.Equal(t, attachmentData(3<<20), parts[1], "the attachment passes unchanged")
	assert.Contains(t, string(parts[len(parts)-1]), "SignatureValue", "the last part is the signature")
	return body, ct
}

// respondAbort: the backend cuts its MTOM package short. The client gets
// a 200 whose body breaks off (or ends incomplete) with no signature part,
// and the response-signing metric counts it aborted.
func respondAbort(t *testing.T, gw *gateway, req []byte) {
	t.Helper()
	aborted := func() float64 {
		return value(t, scrape(t, gw), metrics.NameResponseSigning, map[string]string{"route": "abort", "result": metrics.ResponseAborted})
	}
	before := aborted()
	resp := gw.post("/abort", contentType("1.1"), bytes.NewReader(req))
	require.Equal(t, http.StatusOK, resp.StatusCode, "the root was fine: the response had started")
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Error(t, err, "the client must see the response break off")
	assert.NotContains(t, string(body), "SignatureValue", "no signature part over partial data")
	_, params, perr := stdmime.ParseMediaType(resp.Header.Get("Content-Type"))
	require.NoError(t, perr)
	assert.NotContains(t, string(body), "--"+params["boundary"]+"--", "no close delimiter")
	assert.Eventually(t, func() bool { return aborted() == before+1 }, 5*time.Second, 20*time.Millisecond,
		"%s{route=abort,result=aborted}", metrics.NameResponseSigning)
}

// respondParts splits a multipart body into its parts' contents.
func respondParts(t *testing.T, ct string, body []byte) [][]byte {
	t.Helper()
	media, params, err := stdmime.ParseMediaType(ct)
	require.NoError(t, err)
	require.Equal(t, "multipart/related", media)
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	var out [][]byte
	for {
		p, err := mr.NextRawPart()
		if err == io.EOF {
			return out
		}
		require.NoError(t, err)
		b, err := io.ReadAll(p)
		require.NoError(t, err)
		out = append(out, b)
	}
}
