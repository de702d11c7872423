package gateway

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/soap"
	"github.com/wssgw/wssgw/internal/testpki"
)

// testEnvelope is the smallest message the gate forwards.
const testEnvelope = `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><x/></s:Body></s:Envelope>`

// envelopeOf builds an envelope of namespace ns; mid goes between the Header
// and the Body.
func envelopeOf(ns, mid string) string {
	return `<soapenv:Envelope xmlns:soapenv="` + ns + `"><soapenv:Header><h:T xmlns:h="urn:h">1</h:T></soapenv:Header>` + mid +
		`<soapenv:Body><m:Get xmlns:m="urn:m">42</m:Get></soapenv:Body></soapenv:Envelope>`
}

var (
	env11 = envelopeOf(soap.NS11, "\n")
	env12 = envelopeOf(soap.NS12, "\n")
)

// gateCase is one request and what must come of it.
type gateCase struct {
	name, ctype, body string
	status            int    // 200: forwarded
	fault             string // a substring of the fault
	forwardType       string // the Content-Type the backend must get
}

// run sends tc to f and checks the answer and what rec received.
func (tc gateCase) run(t *testing.T, f *front, rec *recorder) {
	t.Helper()
	before := len(rec.requests())
	resp, err := http.Post(f.URL+"/orders", tc.ctype, strings.NewReader(tc.body))
	require.NoError(t, err)
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, tc.status, resp.StatusCode, string(answer))
	got := rec.requests()[before:]
	if tc.status != http.StatusOK {
		assert.Empty(t, got, "a refused message reached the backend")
		assert.Contains(t, string(answer), tc.fault)
		return
	}
	require.Len(t, got, 1)
	assert.Equal(t, tc.body, got[0].body, "the backend gets the gated bytes, unchanged")
	if tc.forwardType != "" {
		assert.Equal(t, tc.forwardType, got[0].contentType)
	}
}

const (
	faultMalformed = "Malformed SOAP message"
	faultCharset   = "Unsupported charset"
	faultVersion11 = "<faultcode>soap:VersionMismatch</faultcode>"
	faultVersion12 = "<env:Value>env:VersionMismatch</env:Value>"
	faultSecurity  = "wsse:InvalidSecurity"
	ctype11        = "text/xml; charset=utf-8"
	ctype12        = `application/soap+xml; charset=utf-8; action="urn:get"`
	forward12      = ctype12
)

// plainCases attack a route that verifies nothing: each fail/ case reached
// the backend before the gate ran on every route (issue 13 items 5, 6, 7, 9).
var plainCases = []gateCase{
	{name: "ok/soap11", ctype: ctype11, body: env11, status: 200, forwardType: ctype11},
	{name: "ok/soap12-keeps-action", ctype: ctype12, body: env12, status: 200, forwardType: forward12},
	{name: "ok/charset-absent", ctype: "text/xml", body: env11, status: 200, forwardType: ctype11},
	{name: "ok/charset-upper", ctype: "text/xml; charset=UTF-8", body: env11, status: 200, forwardType: ctype11},
	{name: "ok/charset-quoted", ctype: `text/xml; charset="utf-8"`, body: env11, status: 200, forwardType: ctype11},
	{name: "ok/soap12-no-action", ctype: "application/soap+xml", body: env12, status: 200, forwardType: "application/soap+xml; charset=utf-8"},
	{name: "ok/decl-and-white-space", ctype: ctype11, body: "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + env11 + "\n", status: 200},
	{name: "ok/text-comment-cdata-in-body", ctype: ctype11, status: 200,
		body: `<s:Envelope xmlns:s="` + soap.NS11 + `"><s:Body>t &#65; <!-- c --><![CDATA[d]]><m:Get xmlns:m="urn:m">4&amp;2</m:Get></s:Body></s:Envelope>`},

	{name: "fail/charset-utf-7", ctype: "text/xml; charset=utf-7", body: env11, status: 415, fault: faultCharset},
	{name: "fail/charset-iso-8859-1", ctype: "text/xml; charset=iso-8859-1", body: env11, status: 415, fault: faultCharset},
	{name: "fail/charset-utf-16", ctype: `application/soap+xml; charset="UTF-16"`, body: env12, status: 415, fault: faultCharset},
	{name: "fail/charset-duplicate", ctype: "text/xml; charset=utf-8; charset=utf-7", body: env11, status: 415, fault: faultCharset},
	{name: "fail/xml-decl-latin1", ctype: ctype11, body: `<?xml version="1.0" encoding="ISO-8859-1"?>` + env11, status: 400, fault: faultMalformed},
	{name: "fail/xxe", ctype: ctype11, body: `<!DOCTYPE e [<!ENTITY x SYSTEM "file:///etc/passwd">]>` + env11, status: 400, fault: faultMalformed},
	{name: "fail/billion-laughs", ctype: ctype11, body: `<!DOCTYPE e [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;">]>` + env11, status: 400, fault: faultMalformed},
	{name: "fail/pi", ctype: ctype11, body: `<?xml-stylesheet href="x"?>` + env11, status: 400, fault: faultMalformed},
	{name: "fail/not-well-formed", ctype: ctype11, body: env11[:len(env11)-3], status: 400, fault: faultMalformed},
	{name: "fail/too-deep", ctype: ctype11, status: 400, fault: faultMalformed,
		body: `<s:Envelope xmlns:s="` + soap.NS11 + `"><s:Body>` + strings.Repeat("<a>", 200) + strings.Repeat("</a>", 200) + `</s:Body></s:Envelope>`},
	{name: "fail/not-an-envelope", ctype: ctype11, body: `<m:Get xmlns:m="urn:m"/>`, status: 400, fault: faultMalformed},
	{name: "fail/text-between-header-and-body", ctype: ctype11, body: envelopeOf(soap.NS11, "admin"), status: 400, fault: faultMalformed},
	{name: "fail/cdata-fake-body", ctype: ctype11, body: envelopeOf(soap.NS11, `<![CDATA[<soapenv:Body><m:Delete xmlns:m="urn:m"/></soapenv:Body>]]>`), status: 400, fault: faultMalformed},
	{name: "fail/comment-in-envelope", ctype: ctype11, body: envelopeOf(soap.NS11, "<!-- c -->"), status: 400, fault: faultMalformed},
	{name: "fail/char-ref-in-envelope", ctype: ctype11, body: envelopeOf(soap.NS11, "&#65;"), status: 400, fault: faultMalformed},
	{name: "fail/comment-after-root", ctype: ctype11, body: env11 + "<!-- c -->", status: 400, fault: faultMalformed},
	{name: "fail/soap11-under-soap12-type", ctype: ctype12, body: env11, status: 500, fault: faultVersion12},
	{name: "fail/soap12-under-text-xml", ctype: ctype11, body: env12, status: 500, fault: faultVersion11},
	{name: "fail/unknown-envelope-namespace", ctype: ctype11, body: envelopeOf("urn:not-soap", ""), status: 500, fault: faultVersion11},
}

func TestGatePolicyNone(t *testing.T) {
	rec := newRecorder(t)
	f := newFront(t, rec.URL, nil)
	outcomes := map[metrics.Outcome]float64{}
	for _, tc := range plainCases {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, f, rec) })
		switch tc.status {
		case 400, 500:
			outcomes[metrics.BadRequest]++
		case 415:
			outcomes[metrics.UnsupportedMediaType]++
		}
	}
	for o, n := range outcomes {
		assert.Equal(t, n, f.outcome(t, o), o.String())
	}
}

// TestGateBodyLimit: the route's body limit is the gate's byte limit too.
func TestGateBodyLimit(t *testing.T) {
	rec := newRecorder(t)
	f := newFront(t, rec.URL, func(r *config.Route) { r.MaxBodyBytes = config.ByteSize(len(env11) + 1) })
	gateCase{name: "ok/at-limit", ctype: ctype11, body: env11 + "\n", status: 200}.run(t, f, rec)
	gateCase{name: "fail/over-limit", ctype: ctype11, body: env11 + "\n\n", status: 413, fault: "too large"}.run(t, f, rec)
}

// TestUnsafeSkipGate: the opt-out streams anything, as before issue 13.
func TestUnsafeSkipGate(t *testing.T) {
	rec := newRecorder(t)
	f := newFront(t, rec.URL, func(r *config.Route) { r.UnsafeSkipGate = true })
	for _, tc := range plainCases {
		t.Run(tc.name, func(t *testing.T) {
			tc.status, tc.forwardType = 200, tc.ctype
			tc.run(t, f, rec)
		})
	}
}

// mtomNone is an MTOM package on a route without security.
func mtomNone(root, rootType string) (string, string) {
	const b = "gate-unit-boundary"
	ct := `multipart/related; type="application/xop+xml"; start="<root@unit>"; start-info="text/xml"; boundary=` + b
	switch {
	case strings.HasPrefix(rootType, "text/xml"): // SwA
		ct = `multipart/related; type="text/xml"; start="<root@unit>"; boundary=` + b
	case strings.Contains(rootType, "no-start-info"):
		rootType = strings.TrimSuffix(rootType, "; no-start-info")
		ct = strings.Replace(ct, `start-info="text/xml"; `, "", 1)
	case strings.Contains(rootType, "soap+xml"):
		ct = strings.Replace(ct, `start-info="text/xml"`, `start-info="application/soap+xml"`, 1)
	}
	body := fmt.Sprintf("--%[1]s\r\nContent-Type: %[2]s\r\nContent-ID: <root@unit>\r\n\r\n%[3]s\r\n"+
		"--%[1]s\r\nContent-Type: application/octet-stream\r\nContent-ID: <data@unit>\r\n\r\nDATA\r\n--%[1]s--\r\n", b, rootType, root)
	return ct, body
}

func TestGatePolicyNoneMTOM(t *testing.T) {
	rec := newRecorder(t)
	f := newFront(t, rec.URL, nil)
	xop11 := `application/xop+xml; charset=UTF-8; type="text/xml"`
	xop12 := `application/xop+xml; charset=UTF-8; type="application/soap+xml"`
	tests := []struct {
		name, root, rootType string
		status               int
		fault                string
	}{
		{"ok/soap11", env11, xop11, 200, ""},
		{"ok/soap12", env12, xop12, 200, ""},
		{"ok/no-charset", env11, `application/xop+xml; type="text/xml"`, 200, ""},
		{"ok/swa", env11, "text/xml; charset=utf-8", 200, ""},
		{"ok/soap12-without-start-info", env12, xop12 + "; no-start-info", 200, ""},
		{"fail/soap11-under-soap12-root-without-start-info", env11, xop12 + "; no-start-info", 500, faultVersion11},
		{"fail/swa-root-charset", env11, "text/xml; charset=utf-16", 415, faultCharset},
		{"fail/swa-root-cdata-body", envelopeOf(soap.NS11, `<![CDATA[<soapenv:Body/>]]>`), "text/xml", 400, faultMalformed},
		{"fail/root-xxe", `<!DOCTYPE e [<!ENTITY x SYSTEM "file:///etc/passwd">]>` + env11, xop11, 400, faultMalformed},
		{"fail/root-text-in-envelope", envelopeOf(soap.NS11, "x"), xop11, 400, faultMalformed},
		{"fail/root-charset", env11, `application/xop+xml; charset=iso-8859-1; type="text/xml"`, 415, faultCharset},
		{"fail/root-version", env12, xop11, 500, faultVersion11},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(rec.requests())
			ct, body := mtomNone(tc.root, tc.rootType)
			resp, err := http.Post(f.URL+"/orders", ct, strings.NewReader(body))
			require.NoError(t, err)
			answer, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.Equal(t, tc.status, resp.StatusCode, string(answer))
			got := rec.requests()[before:]
			if tc.status != 200 {
				assert.Empty(t, got)
				assert.Contains(t, string(answer), tc.fault)
				return
			}
			require.Len(t, got, 1)
			assert.Contains(t, got[0].body, tc.root)
			assert.Contains(t, got[0].body, "\r\n\r\nDATA\r\n")
			assert.True(t, strings.HasPrefix(got[0].contentType, "multipart/related;"), got[0].contentType)
		})
	}
	// A package mime refuses is the malformed fault, not the security one.
	resp, err := http.Post(f.URL+"/orders", `multipart/related; type="text/xml"; boundary=b`, strings.NewReader("--b\r\n\r\n"))
	require.NoError(t, err)
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, 400, resp.StatusCode, string(answer))
	assert.Contains(t, string(answer), faultMalformed)
}

// newUnsecuredPolicyFront is a route whose policy requires nothing: a
// message without WS-Security is forwarded unparsed by wss.Policy.Verify
// (seed 004), so the gate must see it.
func newUnsecuredPolicyFront(t *testing.T, backend string) *front {
	t.Helper()
	dir := t.TempDir()
	ca := testpki.NewCA(t, "gate unit CA")
	cfg := config.Default()
	p := config.DefaultPolicy()
	p.Trust.CAFiles = []string{ca.WriteCert(t, dir)}
	p.Require = []string{}
	cfg.Policies = map[string]config.Policy{"open": p}
	cfg.Routes = []config.Route{{Name: "orders", Path: "/orders", Backend: backend, Policy: "open"}}
	cfg.ApplyDefaults()
	require.NoError(t, cfg.Validate())
	m := metrics.New(metrics.BuildInfo{Version: "test"})
	gw, err := New(&cfg, m, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	t.Cleanup(gw.Close)
	f := &front{Server: httptest.NewServer(gw), metrics: m}
	t.Cleanup(f.Close)
	return f
}

// TestGateUnsecuredPolicy: the seed 004 path gates, and answers with the
// route's uniform security fault.
func TestGateUnsecuredPolicy(t *testing.T) {
	rec := newRecorder(t)
	f := newUnsecuredPolicyFront(t, rec.URL)
	for _, tc := range plainCases {
		if tc.fault == faultMalformed {
			tc.status, tc.fault = 500, faultSecurity
		}
		t.Run(tc.name, func(t *testing.T) { tc.run(t, f, rec) })
	}
	mtom := func(root, rootType string) gateCase {
		ct, body := mtomNone(root, rootType)
		return gateCase{ctype: ct, body: body}
	}
	t.Run("ok/mtom", func(t *testing.T) {
		tc := mtom(env11, `application/xop+xml; type="text/xml"`)
		before := len(rec.requests())
		resp, err := http.Post(f.URL+"/orders", tc.ctype, strings.NewReader(tc.body))
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, 200, resp.StatusCode)
		require.Len(t, rec.requests()[before:], 1)
	})
	for name, tc := range map[string]gateCase{
		"fail/mtom-root-xxe":     mtom(`<!DOCTYPE e [<!ENTITY x SYSTEM "file:///etc/passwd">]>`+env11, `application/xop+xml; type="text/xml"`),
		"fail/mtom-root-version": mtom(env12, `application/xop+xml; type="text/xml"`),
		"fail/mtom-root-charset": mtom(env11, `application/xop+xml; charset=utf-16; type="text/xml"`),
	} {
		t.Run(name, func(t *testing.T) {
			tc.status, tc.fault = map[string]int{"fail/mtom-root-xxe": 500, "fail/mtom-root-version": 500, "fail/mtom-root-charset": 415}[name], ""
			tc.run(t, f, rec)
		})
	}
}

func TestClassifyGate(t *testing.T) {
	tests := map[string]struct {
		err     error
		status  int
		code    soap.Code
		outcome metrics.Outcome
	}{
		"fail/malformed": {&malformedError{fmt.Errorf("x")}, 400, soap.Sender, metrics.BadRequest},
		"fail/version":   {&versionError{space: soap.NS12, announced: soap.V11}, 500, soap.VersionMismatch, metrics.BadRequest},
		"fail/charset":   {fmt.Errorf("gateway: root part: %w", soap.ErrCharset), 415, soap.Sender, metrics.UnsupportedMediaType},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := classify(tc.err)
			assert.Equal(t, tc.status, f.status)
			assert.Equal(t, tc.code, f.code)
			assert.Equal(t, tc.outcome, f.outcome)
		})
	}
}

// TestGateSecuredRoute: on a verifying route the engines gate (no second
// gate), the charset and version rules still apply, and the forwarded label
// is UTF-8. Both engines see the envelope rule: the first message teaches
// the template automaton, the injected ones miss it and the DOM engine's
// gate refuses them.
func TestGateSecuredRoute(t *testing.T) {
	rec := newRecorder(t)
	k := newSigningPKI(t)
	f := newSigningFront(t, rec.URL, k, func(r *config.Responses) { *r = config.Responses{} })
	send := func(ctype string, body []byte) (int, string) {
		resp, err := http.Post(f.URL+"/orders", ctype, strings.NewReader(string(body)))
		require.NoError(t, err)
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(answer)
	}
	inject := func(mid string) []byte {
		b := signedRequest(t, k)
		i := strings.Index(string(b), "</soapenv:Header>") + len("</soapenv:Header>")
		return []byte(string(b[:i]) + mid + string(b[i:]))
	}
	for i := 0; i < 2; i++ { // the second one may take the template path
		status, answer := send(`text/xml; charset="UTF-8"`, signedRequest(t, k))
		require.Equal(t, 200, status, answer)
	}
	got := rec.requests()
	require.Len(t, got, 2)
	assert.Equal(t, ctype11, got[1].contentType)

	tests := []struct {
		name, ctype string
		body        []byte
		status      int
		fault       string
	}{
		{"fail/charset-utf-7", "text/xml; charset=utf-7", signedRequest(t, k), 415, faultCharset},
		{"fail/soap11-under-soap12-type", ctype12, signedRequest(t, k), 500, faultVersion12},
		{"fail/text-between-header-and-body", ctype11, inject("admin"), 500, faultSecurity},
		{"fail/cdata-fake-body", ctype11, inject(`<![CDATA[<soapenv:Body><m:Delete xmlns:m="urn:m"/></soapenv:Body>]]>`), 500, faultSecurity},
		{"fail/comment-in-envelope", ctype11, inject("<!---->"), 500, faultSecurity},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, answer := send(tc.ctype, tc.body)
			assert.Equal(t, tc.status, status, answer)
			assert.Contains(t, answer, tc.fault)
			assert.Len(t, rec.requests(), 2, "a refused message reached the backend")
		})
	}
}
