package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/metrics"
)

// egressRequest is what the legacy client sends: plain SOAP.
const egressRequest = `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body>` +
	`<ord:PlaceOrder xmlns:ord="urn:example:orders"><ord:item>widget</ord:item><ord:qty>3</ord:qty></ord:PlaceOrder>` +
	`</soapenv:Body></soapenv:Envelope>`

// wireTap is a small proxy between the egress gateway and the partner: it
// records the requests it forwards, drops the first path segment when it
// is /tampered, /unsigned or /strict (the routes' own prefixes) and, when
// tamper is set, changes the partner's response on the way back.
type wireTap struct {
	mu       sync.Mutex
	requests [][]byte
	srv      *httptest.Server
}

func newWireTap(t *testing.T, partner string, tamper func([]byte) []byte) *wireTap {
	t.Helper()
	target, err := url.Parse(partner)
	require.NoError(t, err)
	w := &wireTap{}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ModifyResponse = func(resp *http.Response) error {
		if tamper == nil {
			return nil
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		b = tamper(b)
		resp.Body = io.NopCloser(bytes.NewReader(b))
		resp.ContentLength = int64(len(b))
		resp.Header.Set("Content-Length", strconv.Itoa(len(b)))
		return nil
	}
	w.srv = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.mu.Lock()
		w.requests = append(w.requests, b)
		w.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(b))
		for _, prefix := range []string{"/tampered", "/unsigned", "/strict"} {
			r.URL.Path = strings.TrimPrefix(r.URL.Path, prefix)
		}
		rp.ServeHTTP(rw, r)
	}))
	t.Cleanup(w.srv.Close)
	return w
}

func (w *wireTap) last() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.requests) == 0 {
		return nil
	}
	return w.requests[len(w.requests)-1]
}

// partnerConfig is the partner: a second wssgw whose ingress routes
// require a signed Body and Timestamp from the test CA in front of the Go
// backend and sign what it answers: /buffered, /fault (the backend's SOAP
// fault, signed), /confirm (with SignatureConfirmation), /encrypted
// (requests encrypted for the server key, responses encrypted for the
// requester), /mtom (streamed, the signature in the last part) and
// /strict (streamed, the signature encrypted for the requester: strictXOP;
// its backend is a tap that drops the /strict prefix).
func (p *partnerPKI) partnerConfig(backend, strictBackend string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "listen: 127.0.0.1:0\nadmin: {listen: 127.0.0.1:0}\nshutdown: {drainTimeout: 10s}\nroutes:\n")
	fmt.Fprintf(&b, "  - {name: strict, path: /strict, backend: %s, policy: strict}\n", strictBackend)
	for route, policy := range map[string]string{"buffered": "signed", "fault": "signed", "confirm": "confirm",
		"encrypted": "encrypt", "mtom": "stream"} {
		fmt.Fprintf(&b, "  - {name: %[1]s, path: /%[1]s, backend: %[2]s, policy: %[3]s}\n", route, backend, policy)
	}
	b.WriteString("policies:\n")
	for policy, extra := range map[string]string{"signed": "", "confirm": ", signatureConfirmation: true",
		"encrypt": ", encryptForRequester: true", "stream": ", mode: streaming", "strict": ", mode: streaming, strictXOP: true"} {
		fmt.Fprintf(&b, "  %s:\n    require: [signature, timestamp]\n    trust: {caFiles: [%s]}\n"+
			"    decryptionKeys: [{certFile: %s, keyFile: %s}]\n"+
			"    responses: {sign: true, certFile: %s, keyFile: %s%s}\n", policy, p.ca, p.server.CertFile, p.server.KeyFile,
			p.server.CertFile, p.server.KeyFile, extra)
	}
	return b.String()
}

// egressConfig is the legacy service's sidecar: egress routes to the
// partner (through tap for /tampered), signing with the client key, the
// responses verified by policy "partner" (the test CA; the client key
// decrypts what the partner encrypts for it).
func (p *partnerPKI) egressConfig(partner, tap, backend string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "listen: 127.0.0.1:0\nadmin: {listen: 127.0.0.1:0}\nshutdown: {drainTimeout: 10s}\nroutes:\n")
	route := func(name, path, to, egress string) {
		if !strings.Contains(egress, "response:") {
			egress += "      response: {policy: partner}\n"
		}
		fmt.Fprintf(&b, "  - name: %s\n    path: %s\n    backend: %s\n    kind: egress\n    egress:\n"+
			"      sign: {certFile: %s, keyFile: %s}\n%s",
			name, path, to, p.client.CertFile, p.client.KeyFile, egress)
	}
	route("buffered", "/buffered", partner, "")
	route("fault", "/fault", partner, "")
	route("confirm", "/confirm", partner, "      response: {policy: partner, requireSignatureConfirmation: true}\n")
	route("encrypted", "/encrypted", partner, fmt.Sprintf("      encrypt: {partnerCertFile: %s}\n", p.server.CertFile))
	route("mtom", "/mtom", partner, "")
	route("strict", "/strict", partner, "")
	// The tap forwards /tampered/buffered to the partner's /buffered.
	route("tampered", "/tampered", tap, "")
	// Straight to the backend: an unsigned fault, and an unsigned answer.
	route("unsigned-fault", "/unsigned/fault", backend, "")
	route("unsigned", "/unsigned/answer", backend, "")
	// backend is a tap in front of the Go backend.
	fmt.Fprintf(&b, "policies:\n  partner:\n    require: [signature, timestamp]\n    trust: {caFiles: [%s]}\n"+
		"    decryptionKeys: [{certFile: %s, keyFile: %s}]\n", p.ca, p.client.CertFile, p.client.KeyFile)
	return b.String()
}

// TestEgress: a legacy client sends plain SOAP to the egress gateway,
// which signs (and encrypts) it for the partner — a second wssgw with
// ingress routes in front of a Go backend, signing its responses — and
// verifies what comes back before the client sees plaintext: buffered,
// SignatureConfirmation, sign+encrypt both ways, a signed partner fault, a
// streamed trailing-signature MTOM response (seed 001). A response
// tampered with on the way, and an unsigned one, give the client the
// uniform 502 fault, are counted and logged; an unsigned fault passes.
func TestEgress(t *testing.T) {
	pki := newPartnerPKI(t)
	att := attachmentData(3 << 20)
	backend := respondBackend(t, att)
	direct := newWireTap(t, backend.URL, nil) // to the backend, unsigned; drops /unsigned and /strict
	partner := startGateway(t, pki.partnerConfig(backend.URL, direct.srv.URL))
	tap := newWireTap(t, partner.data, func(b []byte) []byte { return bytes.Replace(b, []byte("A-4711"), []byte("A-4712"), 1) })
	// The tap serves /tampered/...; the partner routes /buffered.
	tapURL := tap.srv.URL
	gw := startGateway(t, pki.egressConfig(partner.data, tapURL, direct.srv.URL))

	call := func(path string) (*http.Response, []byte) {
		resp := gw.post(path, contentType("1.1"), strings.NewReader(egressRequest))
		return resp, readAll(t, resp)
	}
	plainAnswer := func(t *testing.T, status int, body []byte) {
		t.Helper()
		require.Equal(t, status, 200, "%s\n%s", body, lastLog(gw))
		assert.Contains(t, string(body), "<ord:id>A-4711</ord:id>", "the partner's answer")
		assert.NotContains(t, string(body), "Security", "the client gets plaintext")
	}

	t.Run("ok/signed", func(t *testing.T) {
		resp, body := call("/buffered")
		plainAnswer(t, resp.StatusCode, body)
	})
	t.Run("ok/signature-confirmation", func(t *testing.T) {
		resp, body := call("/confirm")
		plainAnswer(t, resp.StatusCode, body)
	})
	t.Run("ok/sign-encrypt", func(t *testing.T) {
		wire := newWireTap(t, partner.data, nil)
		g2 := startGateway(t, pki.egressConfig(wire.srv.URL, tapURL, direct.srv.URL))
		resp := g2.post("/encrypted", contentType("1.1"), strings.NewReader(egressRequest))
		body := readAll(t, resp)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s\n%s\n%s", body, lastLog(g2), lastLog(partner))
		assert.Contains(t, string(body), "<ord:id>A-4711</ord:id>", "decrypted with the client key")
		sent := wire.last()
		assert.Contains(t, string(sent), "xenc:EncryptedData")
		assert.NotContains(t, string(sent), "widget", "the request Body went encrypted")
		assert.Contains(t, string(sent), "ds:SignatureValue")
	})
	t.Run("ok/partner-fault", func(t *testing.T) {
		resp, body := call("/fault")
		require.Equal(t, http.StatusInternalServerError, resp.StatusCode, "%s", body)
		assert.Contains(t, string(body), "order book closed", "the partner's fault passes through")
		assert.NotContains(t, string(body), "Security")
	})
	t.Run("ok/unsigned-fault", func(t *testing.T) {
		resp, body := call("/unsigned/fault")
		require.Equal(t, http.StatusInternalServerError, resp.StatusCode, "%s", body)
		assert.Contains(t, string(body), "order book closed")
	})
	t.Run("ok/streamed-mtom", func(t *testing.T) {
		resp, body := call("/mtom")
		require.Equal(t, http.StatusOK, resp.StatusCode, "%.2000s\n%s", body, lastLog(gw))
		parts := respondParts(t, resp.Header.Get("Content-Type"), body)
		require.Len(t, parts, 2, "root and attachment; the signature part is consumed")
		assert.Contains(t, string(parts[0]), "DownloadResponse")
		assert.NotContains(t, string(parts[0]), "Security")
		assert.Equal(t, att, parts[1], "the attachment arrives byte-exact")
	})
	t.Run("ok/streamed-mtom-strict", func(t *testing.T) {
		// strictXOP: the trailing signature is encrypted for the
		// certificate that signed the request, wssgw's egress key.
		resp, body := call("/strict/mtom")
		require.Equal(t, http.StatusOK, resp.StatusCode, "%.2000s\n%s", body, lastLog(gw))
		parts := respondParts(t, resp.Header.Get("Content-Type"), body)
		require.Len(t, parts, 2, "root and attachment; the encrypted signature part is consumed")
		assert.NotContains(t, string(parts[0]), "Security")
		assert.Equal(t, att, parts[1], "the attachment arrives byte-exact")
	})
	t.Run("ok/mtom-request", func(t *testing.T) {
		// The legacy client's MTOM request: signed over its XOP infoset,
		// the attachment sent unchanged; the partner wssgw verifies it.
		root := `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body>` +
			`<f:Upload xmlns:f="urn:e2e:files"><f:data>` + fmt.Sprintf(xopInclude, "cid:"+mtomAttCID) + `</f:data></f:Upload></soapenv:Body></soapenv:Envelope>`
		pkg := mtomPackage([]mtomPart{
			{mtomRootCID, `application/xop+xml; charset=UTF-8; type="text/xml"`, []byte(root)},
			{mtomAttCID, "application/octet-stream", att[:1<<20]},
		})
		resp := gw.post("/buffered", mtomContentType(), bytes.NewReader(pkg))
		body := readAll(t, resp)
		plainAnswer(t, resp.StatusCode, body)
	})
	t.Run("fail/tampered", func(t *testing.T) {
		resp, body := call("/tampered/buffered")
		require.Equal(t, http.StatusBadGateway, resp.StatusCode, "%s", body)
		assert.Contains(t, string(body), "could not be verified")
		assert.NotContains(t, string(body), "A-471", "nothing of the unverified response")
		require.Eventually(t, func() bool { return len(gw.logs.find("egress: partner response rejected")) > 0 }, 5*time.Second, 20*time.Millisecond)
		l := gw.logs.find("egress: partner response rejected")[0]
		assert.Equal(t, "tampered", l["route"])
		assert.Equal(t, "digest", l["reason"])
		assert.Equal(t, tapURL, l["partner"])
	})
	t.Run("fail/unsigned-answer", func(t *testing.T) {
		resp, body := call("/unsigned/answer")
		require.Equal(t, http.StatusBadGateway, resp.StatusCode, "%s", body)
		assert.NotContains(t, string(body), "A-4711")
	})

	fams := scrape(t, gw)
	for _, c := range []struct {
		route, result string
		want          float64
	}{
		{"confirm", metrics.EgressVerified, 1}, {"mtom", metrics.EgressVerified, 1}, {"strict", metrics.EgressVerified, 1},
		{"fault", metrics.EgressPartnerFault, 1}, {"unsigned-fault", metrics.EgressPartnerFault, 1},
		{"tampered", metrics.EgressRejected, 1}, {"unsigned", metrics.EgressRejected, 1},
		{"buffered", metrics.EgressRejected, 0},
	} {
		assert.Equal(t, c.want, value(t, fams, metrics.NameEgressRequests, map[string]string{"route": c.route, "result": c.result}), "%s %s", c.route, c.result)
	}
	assert.Equal(t, 2.0, value(t, fams, metrics.NameEgressRequests, map[string]string{"route": "buffered", "result": metrics.EgressVerified}), "plain and MTOM requests")
	assert.Equal(t, 1.0, value(t, fams, metrics.NameRequests, map[string]string{"route": "tampered", "outcome": metrics.SecurityRejected.String()}))
}
