package e2e

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/replay/replaytest"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/soap"
	"github.com/wssgw/wssgw/internal/testpki"
	"github.com/wssgw/wssgw/test/attack"
)

// bypassPKI is a partner CA with the partner's signing key (and a second
// certificate for the same key, a same-key renewal) and wssgw's decryption
// key.
type bypassPKI struct {
	dir, ca                 string
	client, renewed, server *testpki.Leaf
	seq                     atomic.Int64
}

func newBypassPKI(t *testing.T) *bypassPKI {
	t.Helper()
	dir := t.TempDir()
	ca := testpki.NewCA(t, "Partner CA")
	p := &bypassPKI{dir: dir, ca: ca.WriteCert(t, dir)}
	p.client = ca.IssueRSA(t, dir, "client")
	p.renewed = ca.Renew(t, t.TempDir(), p.client)
	p.server = ca.IssueRSA(t, dir, "server")
	return p
}

// sign secures a fresh envelope (a unique payload each time) with the
// partner key; mod adjusts the signer options.
func (p *bypassPKI) sign(t *testing.T, ns string, mod func(*signer.Options)) []byte {
	t.Helper()
	body := fmt.Sprintf(`<ord:PlaceOrder xmlns:ord="urn:example:orders"><ord:sku>SKU-%06d</ord:sku><ord:qty>1</ord:qty></ord:PlaceOrder>`, p.seq.Add(1))
	o := signer.DefaultOptions()
	o.Signer, o.Certificate = p.client.Key, p.client.Cert
	if mod != nil {
		mod(&o)
	}
	out, err := signer.Secure(plainEnvelope(ns, body), o)
	require.NoError(t, err)
	return out
}

// bypassOptions are the parts of bypassConfig that differ per gateway.
type bypassOptions struct {
	top          string // top-level keys
	admin        string // extra keys of the admin block, e.g. "templates: true"
	signedPolicy string // extra keys of policy signed, indented by 4
	routes       string // extra routes, indented by 2
	policies     string // extra policies, indented by 2
}

// bypassConfig: a secured /orders (signed Body and Timestamp from the
// partner CA) and the policy-none /orders/wsdl and /public in front of the
// same backend, as issue 13 found them; /open has a policy that requires
// nothing (require: []). The first-sight lanes are off: the suite asks
// each of one signer's many shapes, sent back to back between hits, for
// its verdict, and the lanes would shed some of them (503) by timing;
// TestFirstSightLanesThroughGateway attacks the lanes.
func (p *bypassPKI) bypassConfig(backend string, o bypassOptions) string {
	admin := "listen: 127.0.0.1:0"
	if o.admin != "" {
		admin += ", " + o.admin
	}
	return fmt.Sprintf(`
listen: 127.0.0.1:0
admin: {%[6]s}
shutdown: {drainTimeout: 10s}
server: {memory: {firstSightShare: 0}}
%[5]s
routes:
  - {name: orders-wsdl, path: /orders/wsdl, backend: %[1]s, policy: none}
  - {name: orders, path: /orders, backend: %[1]s, policy: signed,
     identityHeaders: {subject: X-WSS-Subject, thumbprint: X-WSS-Thumbprint, username: X-Partner-User}}
  - {name: public, path: /public, backend: %[1]s, policy: none}
  - {name: open, path: /open, backend: %[1]s, policy: open}
%[7]s
policies:
  signed:
    require: [signature, timestamp]
    trust: {caFiles: [%[2]s]}
    decryptionKeys: [{certFile: %[3]s, keyFile: %[4]s}]
%[8]s
  open:
    require: []
    trust: {caFiles: [%[2]s]}
%[9]s
`, backend, p.ca, p.server.CertFile, p.server.KeyFile, o.top, admin, o.routes, o.signedPolicy, o.policies)
}

// identityNames are the reserved identity header names of bypassConfig,
// folded (ASCII lower case, "_" as "-"): the defaults and every
// identityHeaders name configured.
var identityNames = []string{"x-wss-subject", "x-wss-thumbprint", "x-wss-username", "x-partner-user"}

func foldHeader(name string) string { return strings.ReplaceAll(strings.ToLower(name), "_", "-") }

// identityHeaders returns the values of every header of h whose folded
// name is a reserved identity name, by the name as received.
func identityHeaders(h http.Header) map[string][]string {
	out := map[string][]string{}
	for k, v := range h {
		for _, n := range identityNames {
			if foldHeader(k) == n {
				out[k] = v
			}
		}
	}
	return out
}

const (
	ct11 = "text/xml; charset=utf-8"
	ct12 = "application/soap+xml; charset=utf-8"
)

// faultBook checks that faults of one class are identical but for the
// correlation id (test/e2e/attack_test.go's uniform-fault rule), per
// response Content-Type.
type faultBook map[string]map[string]string // class+content type -> stripped body -> first case

func (f faultBook) add(class, name string, r rawResponse) {
	stripped, _ := withoutCorrelationID(r.body)
	k := class + " " + r.header.Get("Content-Type")
	if f[k] == nil {
		f[k] = map[string]string{}
	}
	if _, ok := f[k][stripped]; !ok {
		f[k][stripped] = name
	}
}

func (f faultBook) check(t *testing.T) {
	for k, bodies := range f {
		if !assert.Len(t, bodies, 1, "%s faults differ apart from the correlation id", k) {
			for body, name := range bodies {
				t.Logf("first sent by %s:\n%s", name, body)
			}
		}
	}
}

// soapFaultCode is the fault code of a SOAP 1.1 or 1.2 fault body ("" when
// the body is not a fault).
func soapFaultCode(t *testing.T, r rawResponse) string {
	t.Helper()
	f := parseFault(t, r.asResponse())
	if f.Body.Fault.Code11 != "" {
		return f.Body.Fault.Code11
	}
	return f.Body.Fault.Code12
}

// requestFault asserts a Sender fault with the given status whose reason
// contains reason (empty: any).
func requestFault(t *testing.T, r rawResponse, status int, reason string) {
	t.Helper()
	assert.Equal(t, status, r.status, "%s", r.body)
	code := soapFaultCode(t, r)
	assert.Contains(t, []string{"soap:Client", "env:Sender"}, code, "a Sender fault: %s", r.body)
	if reason != "" {
		assert.Contains(t, string(r.body), reason)
	}
}

// logLine is the request log line of correlation id id.
func logLine(t *testing.T, g *gateway, id string) map[string]any {
	t.Helper()
	requestReason(t, g, id)
	for _, l := range g.logs.find("request") {
		if l["id"] == id {
			return l
		}
	}
	return nil
}

var bodyRE = regexp.MustCompile(`(?s)<soapenv:Body[ >].*</soapenv:Body>`)

// signedBody is the soap:Body element of a message as the client sent it.
func signedBody(t *testing.T, msg []byte) string {
	t.Helper()
	b := bodyRE.Find(msg)
	require.NotNil(t, b, "no soapenv:Body")
	return string(b)
}

// stageCount is the number of observations of a route's stage histogram
// (0 when the series does not exist yet).
func stageCount(t *testing.T, g *gateway, route, stage string) float64 {
	t.Helper()
	fam, ok := scrape(t, g)[metrics.NameStageDuration]
	if !ok {
		return 0
	}
	for _, m := range fam.Metric {
		if matches(m, map[string]string{metrics.LabelRoute: route, metrics.LabelStage: stage}) && m.Histogram != nil {
			return float64(m.Histogram.GetSampleCount())
		}
	}
	return 0
}

// TestBypass is issue 13 through the real binary: every way around the
// engines its attacker found, one subtest per item, against a backend that
// switches protocols when asked and normalizes paths like Tomcat. Nothing
// unverified may reach the backend, and faults of one kind are uniform.
func TestBypass(t *testing.T) {
	started := time.Now()
	s := newBypassSuite(t)
	t.Run("upgrade", s.upgrade)
	t.Run("paths", s.paths)
	t.Run("cert-swap-replay", s.certSwapReplay)
	t.Run("identity", s.identity)
	t.Run("charset", s.charset)
	t.Run("version", s.version)
	t.Run("envelope-text", s.envelopeText)
	t.Run("unsigned-content", s.unsignedContent)
	t.Run("gate-policy-none", s.gatePolicyNone)
	t.Run("encrypted-keys", s.encryptedKeys)
	t.Run("dangling-encryptedkey", s.danglingEncryptedKey)
	t.Run("expires-2300", s.expires2300)
	t.Run("admin", s.admin)
	t.Run("invariant/backend-saw-only-verified-orders", s.backendSawOnlyVerifiedOrders)
	t.Run("invariant/uniform-faults", func(t *testing.T) { s.faults.check(t) })
	t.Logf("TestBypass: %v", time.Since(started).Round(time.Millisecond))
}

// bypassSuite is TestBypass's shared state: one partner PKI, one
// recording backend, the gateway most cases run against, and the faults
// seen, by class.
type bypassSuite struct {
	pki     *bypassPKI
	backend *bypassBackend
	gw      *gateway
	faults  faultBook
	seq     int
	// unsigned is a plain SOAP 1.1 request for the secured service,
	// without WS-Security: it must never reach /orders.
	unsigned []byte
}

func newBypassSuite(t *testing.T) *bypassSuite {
	t.Helper()
	s := &bypassSuite{pki: newBypassPKI(t), backend: newBypassBackend(t), faults: faultBook{},
		unsigned: plainEnvelope(soap.NS11, `<ord:PlaceOrder xmlns:ord="urn:example:orders"><ord:sku>UNSIGNED</ord:sku></ord:PlaceOrder>`)}
	s.gw = startGateway(t, s.pki.bypassConfig(s.backend.URL, bypassOptions{}))
	return s
}

// nextID is a fresh correlation id, to find a request's log line.
func (s *bypassSuite) nextID() string { s.seq++; return fmt.Sprintf("bypass-%04d", s.seq) }

// post sends a message with a fresh correlation id.
func (s *bypassSuite) post(t *testing.T, g *gateway, target, ct string, body []byte, header ...string) (rawResponse, string) {
	t.Helper()
	id := s.nextID()
	return send(t, g, rawRequest{target: target, contentType: ct, body: body, header: append(header, "X-Request-Id: "+id)}), id
}

// nothingForwarded asserts the backend got nothing since its n-th request.
func (s *bypassSuite) nothingForwarded(t *testing.T, n int) {
	t.Helper()
	for _, r := range s.backend.since(n) {
		t.Errorf("SECURITY: the backend received %s %s (normalized %s):\n%s", r.Method, r.Target, r.Path, r.Body)
	}
}

// securityFault asserts the uniform WS-Security fault.
func (s *bypassSuite) securityFault(t *testing.T, name string, r rawResponse, version string) {
	t.Helper()
	requireSecurityFault(t, r.asResponse(), version)
	s.faults.add("security", name, r)
}

// swap replaces the client certificate in msg's BinarySecurityToken by a
// same-key renewal of it.
func (s *bypassSuite) swap(t *testing.T, msg []byte) []byte {
	t.Helper()
	old := base64.StdEncoding.EncodeToString(s.pki.client.Cert.Raw)
	require.Equal(t, 1, strings.Count(string(msg), old), "the BST holds the client certificate once")
	return []byte(strings.Replace(string(msg), old, base64.StdEncoding.EncodeToString(s.pki.renewed.Cert.Raw), 1))
}

// certSwap: a message accepted once, then the same with its token swapped
// (templates: on the template path).
func (s *bypassSuite) certSwap(t *testing.T, g *gateway, templates bool) {
	n := s.backend.count()
	if templates {
		// The first message of the shape teaches the template.
		resp, _ := s.post(t, g, "/orders", ct11, s.pki.sign(t, soap.NS11, nil))
		require.Equal(t, http.StatusOK, resp.status, "%s\n%s", resp.body, lastLog(g))
	}
	msg := s.pki.sign(t, soap.NS11, nil)
	resp, _ := s.post(t, g, "/orders", ct11, msg)
	require.Equal(t, http.StatusOK, resp.status, "%s\n%s", resp.body, lastLog(g))
	accepted := s.backend.count()
	hits := func() float64 {
		return value(t, scrape(t, g), metrics.NameTemplateLookups, map[string]string{"route": "orders", "result": metrics.LookupHit})
	}
	before := 0.0
	if templates {
		before = hits()
	}
	resp, id := s.post(t, g, "/orders", ct11, s.swap(t, msg))
	if templates {
		assert.Equal(t, before+1, hits(), "the swapped message was verified on the template path")
	}
	s.nothingForwarded(t, accepted)
	s.securityFault(t, "cert-swap", resp, "1.1")
	assert.Equal(t, "replay", requestReason(t, g, id), "the swapped message is a replay")
	assert.Equal(t, n+map[bool]int{true: 2, false: 1}[templates], s.backend.count())
}

// upgrade is issue 13 item 1 (contract 1): no protocol switching, on any
// route; a fault, not a tunnel.
func (s *bypassSuite) upgrade(t *testing.T) {
	cases := []struct {
		name, target string
		header       []string
		signed       bool
	}{
		{"websocket", "/orders", []string{"Connection: Upgrade", "Upgrade: websocket", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13"}, true},
		{"connection-mixed-case", "/orders", []string{"Connection: keep-alive, UPGRADE", "Upgrade: WebSocket", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13"}, true},
		{"upgrade-h2c-and-websocket", "/orders", []string{"Connection: Upgrade", "Upgrade: h2c, websocket"}, true},
		{"http2-settings-only", "/orders", []string{"HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA"}, true},
		{"policy-none-websocket", "/orders/wsdl", []string{"Connection: Upgrade", "Upgrade: websocket", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13"}, false},
	}
	// Defence in depth: a backend's 101 is never relayed, even
	// unasked; the exchange ends in a 502 fault.
	t.Run("fail/backend-101-unasked", func(t *testing.T) {
		before := s.backend.tunnel()
		resp, conn, br := roundTrip(t, s.gw, rawRequest{target: "/public/switch", contentType: ct11, body: s.unsigned,
			header: []string{"X-Request-Id: " + s.nextID()}})
		_, _ = conn.Write(rawRequest{target: "/orders", contentType: ct11, body: s.unsigned, header: []string{"Connection: close"}}.bytes())
		_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
		_, _ = io.Copy(io.Discard, br)
		s.backend.settle(t)
		require.NotEqual(t, http.StatusSwitchingProtocols, resp.status, "SECURITY: the gateway relayed a 101")
		assert.Equal(t, http.StatusBadGateway, resp.status, "%s", resp.body)
		assert.Contains(t, []string{"soap:Server", "env:Receiver"}, soapFaultCode(t, resp))
		assert.Equal(t, string(before), string(s.backend.tunnel()), "SECURITY: bytes were tunnelled to the backend")
	})
	// An offer to upgrade to h2c alone is ignored (RFC 9110 §7.8; Apache
	// CXF 4 makes it on every plain-HTTP request): the request is served as
	// HTTP/1.1 and what follows on the connection is one more HTTP/1.1
	// request, verified like any other, never a tunnel.
	for _, c := range []struct {
		name, target string
		header       []string
		signed       bool
	}{
		{"h2c", "/orders", []string{"Connection: Upgrade, HTTP2-Settings", "Upgrade: h2c", "HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA"}, true},
		{"upgrade-header-only", "/orders", []string{"Upgrade: h2c"}, true},
		{"policy-none-h2c", "/public", []string{"Connection: Upgrade, HTTP2-Settings", "Upgrade: h2c", "HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA"}, false},
	} {
		t.Run("ok/ignored-"+c.name, func(t *testing.T) {
			n := s.backend.count()
			before := s.backend.tunnel()
			body := s.unsigned
			if c.signed {
				body = s.pki.sign(t, soap.NS11, nil)
			}
			resp, conn, br := roundTrip(t, s.gw, rawRequest{target: c.target, contentType: ct11, body: body,
				header: append(c.header, "X-Request-Id: "+s.nextID())})
			_, _ = conn.Write(rawRequest{target: "/orders", contentType: ct11, body: s.unsigned, header: []string{"Connection: close"}}.bytes())
			_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
			_, _ = io.Copy(io.Discard, br)
			s.backend.settle(t)

			require.NotEqual(t, http.StatusSwitchingProtocols, resp.status, "SECURITY: the gateway relayed a 101")
			assert.Equal(t, http.StatusOK, resp.status, "%s", resp.body)
			assert.Equal(t, string(before), string(s.backend.tunnel()), "SECURITY: bytes were tunnelled to the backend")
			assert.Equal(t, n+1, s.backend.count(), "only the first request is forwarded; the unsigned one after it is refused")
		})
	}
	for _, c := range cases {
		t.Run("fail/"+c.name, func(t *testing.T) {
			n := s.backend.count()
			before := s.backend.tunnel()
			body := s.unsigned
			if c.signed {
				body = s.pki.sign(t, soap.NS11, nil)
			}
			resp, conn, br := roundTrip(t, s.gw, rawRequest{target: c.target, contentType: ct11, body: body,
				header: append(c.header, "X-Request-Id: "+s.nextID())})
			// Then, on the same connection, what would be tunnelled:
			// an unsigned request for the secured service.
			_, _ = conn.Write(rawRequest{target: "/orders", contentType: ct11, body: s.unsigned, header: []string{"Connection: close"}}.bytes())
			_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
			_, _ = io.Copy(io.Discard, br)
			s.backend.settle(t)

			assert.NotEqual(t, http.StatusSwitchingProtocols, resp.status, "SECURITY: the gateway relayed a 101")
			assert.Equal(t, string(before), string(s.backend.tunnel()), "SECURITY: bytes were tunnelled to the backend")
			s.nothingForwarded(t, n)
			if resp.status != http.StatusSwitchingProtocols {
				requestFault(t, resp, http.StatusBadRequest, "Protocol upgrade not allowed")
				s.faults.add("upgrade", c.name, resp)
			}
		})
	}
}

// paths is item 2 (contract 2): request paths that a Tomcat-like backend
// resolves to the secured /orders, sent as raw request lines (Go's client
// would clean them).
func (s *bypassSuite) paths(t *testing.T) {
	for _, target := range []string{
		"/orders/wsdl/..", "/orders/wsdl/../", "/orders/wsdl/%2e%2e", "/orders/wsdl/%2E%2E/", "/orders/wsdl%2f..",
		"/orders/wsdl%2F..", "/orders/wsdl/..;/", "/orders/wsdl/.;/..;/", "/orders/wsdl;x=1/../",
		"/public/../orders", "/public/./../orders", "/public/..%2forders", "/public%2f..%2forders", "/public/%2e%2e/orders",
		"/public/.%2e/orders", "/public/..%5corders", `/public\..\orders`, "/public//../../orders", "//orders",
		"/public/%252e%252e/orders", "/public/%00/../../orders", "/public;jsessionid=1", "/public/%zz/../orders",
		"http://wssgw.test/public/../orders",
	} {
		t.Run("fail/"+target, func(t *testing.T) {
			n := s.backend.count()
			resp, _ := s.post(t, s.gw, target, ct11, s.unsigned)
			s.nothingForwarded(t, n)
			if strings.Contains(target, "%zz") {
				// net/http refuses a malformed escape in the
				// request-target itself (a plain 400) before any
				// handler runs.
				assert.Equal(t, http.StatusBadRequest, resp.status)
				return
			}
			requestFault(t, resp, http.StatusBadRequest, "Invalid request path")
			s.faults.add("path", target, resp)
		})
	}
	// Other percent-encodings pass, routed by the decoded path.
	t.Run("ok/percent-encoded-letter", func(t *testing.T) {
		n := s.backend.count()
		resp, _ := s.post(t, s.gw, "/public/x%41", ct11, s.unsigned)
		require.Equal(t, http.StatusOK, resp.status, "%s", resp.body)
		require.Equal(t, n+1, s.backend.count())
		assert.Equal(t, "/public/xA", s.backend.last().Path)
	})
	// Query strings are the backend's business: forwarded untouched.
	t.Run("ok/query-untouched", func(t *testing.T) {
		n := s.backend.count()
		resp, _ := s.post(t, s.gw, "/public?wsdl&next=..%2F..%2Forders", ct11, s.unsigned)
		require.Equal(t, http.StatusOK, resp.status, "%s", resp.body)
		require.Equal(t, n+1, s.backend.count())
		assert.Equal(t, "/public?wsdl&next=..%2F..%2Forders", s.backend.last().Target)
	})
}

// certSwapReplay is item 3 (contract 9): a same-key renewal swapped into the
// unsigned BinarySecurityToken does not make an accepted message new again,
// on the template path and on the DOM engine.
func (s *bypassSuite) certSwapReplay(t *testing.T) {
	t.Run("fail/templates-on", func(t *testing.T) { s.certSwap(t, s.gw, true) })
	t.Run("fail/templates-off", func(t *testing.T) {
		g := startGateway(t, s.pki.bypassConfig(s.backend.URL, bypassOptions{top: "templates: {enabled: false}"}))
		s.certSwap(t, g, false)
	})
}

// identity is item 4 (contract 3): identity headers the client sends never
// reach the backend, in any spelling, on any route; the verified ones cannot
// be dropped by Connection.
func (s *bypassSuite) identity(t *testing.T) {
	spoofs := []string{"X_WSS_Subject: CN=admin", "x-wss-subject: CN=admin", "X-WSS-Thumbprint: 00", "X_WSS_Thumbprint: 00",
		"X-WSS-Username: admin", "X_Wss_Username: admin", "X-Partner-User: admin", "X_PARTNER_USER: admin"}
	thumb := sha256.Sum256(s.pki.client.Cert.Raw)
	verified := map[string][]string{"X-Wss-Subject": {"CN=client"}, "X-Wss-Thumbprint": {hex.EncodeToString(thumb[:])}}
	cases := []struct {
		name, target string
		header       []string
	}{
		{"secured-spelled-otherwise", "/orders", spoofs},
		{"secured-connection-names-identity", "/orders", append([]string{"Connection: keep-alive, X-WSS-Subject, X-WSS-Thumbprint"}, spoofs...)},
		{"policy-none", "/public", spoofs},
		{"policy-none-connection-names-identity", "/orders/wsdl", append([]string{"Connection: keep-alive, X-WSS-Subject"}, spoofs...)},
		{"require-nothing", "/open", spoofs},
	}
	for _, c := range cases {
		t.Run("ok/"+c.name, func(t *testing.T) {
			n := s.backend.count()
			body := s.unsigned
			if c.target == "/orders" {
				body = s.pki.sign(t, soap.NS11, nil)
			}
			resp, _ := s.post(t, s.gw, c.target, ct11, body, c.header...)
			require.Equal(t, http.StatusOK, resp.status, "%s\n%s", resp.body, lastLog(s.gw))
			require.Equal(t, n+1, s.backend.count())
			got := identityHeaders(s.backend.last().Header)
			if c.target == "/orders" {
				assert.Equal(t, verified, got, "the backend sees the verified identity only")
			} else {
				assert.Empty(t, got, "SECURITY: identity headers reach the backend of a route that verifies nothing")
			}
		})
	}
}

// charset is item 5 (contract 4): one charset, and the forwarded label says
// what was verified.
func (s *bypassSuite) charset(t *testing.T) {
	for _, v := range []struct{ name, ns, version string }{{"soap1.1", soap.NS11, "1.1"}, {"soap1.2", soap.NS12, "1.2"}} {
		labels, err := attack.Labels(s.pki.sign(t, v.ns, nil))
		require.NoError(t, err)
		for _, l := range labels {
			if l.VersionMismatch {
				continue
			}
			for _, route := range []string{"/orders", "/public"} {
				t.Run("fail/"+v.name+route+"/"+l.Name, func(t *testing.T) {
					n := s.backend.count()
					resp, _ := s.post(t, s.gw, route, l.ContentType, s.pki.sign(t, v.ns, nil))
					s.nothingForwarded(t, n)
					requestFault(t, resp, http.StatusUnsupportedMediaType, "")
					s.faults.add("charset", l.Name, resp)
				})
			}
		}
	}
	// The root part of an MTOM package is the envelope: same rule.
	for _, c := range []struct{ name, charset string }{{"ok/mtom-root-utf-8", "UTF-8"}, {"fail/mtom-root-iso-8859-1", "ISO-8859-1"}} {
		t.Run(c.name, func(t *testing.T) {
			pkg := mtomPackage([]mtomPart{
				{mtomRootCID, `application/xop+xml; charset=` + c.charset + `; type="text/xml"`, s.pki.sign(t, soap.NS11, nil)},
			})
			n := s.backend.count()
			resp, _ := s.post(t, s.gw, "/orders", mtomContentType(), pkg)
			if c.charset == "UTF-8" {
				require.Equal(t, http.StatusOK, resp.status, "%s\n%s", resp.body, lastLog(s.gw))
				return
			}
			s.nothingForwarded(t, n)
			requestFault(t, resp, http.StatusUnsupportedMediaType, "")
			s.faults.add("charset", c.name, resp)
		})
	}
	for _, c := range []struct {
		name, route, ns, ct, action string
	}{
		{"soap1.1-utf-8-upper", "/orders", soap.NS11, "text/xml; charset=UTF-8", ""},
		{"soap1.1-no-charset", "/orders", soap.NS11, "text/xml", ""},
		{"soap1.2-action-kept", "/orders", soap.NS12, `application/soap+xml; action="urn:example:orders/Place"`, "urn:example:orders/Place"},
		{"soap1.2-quoted-utf-8", "/orders", soap.NS12, `application/soap+xml; charset="utf-8"; action="urn:a"`, "urn:a"},
		{"policy-none-no-charset", "/public", soap.NS11, "text/xml", ""},
	} {
		t.Run("ok/"+c.name, func(t *testing.T) {
			n := s.backend.count()
			resp, _ := s.post(t, s.gw, c.route, c.ct, s.pki.sign(t, c.ns, nil))
			require.Equal(t, http.StatusOK, resp.status, "%s\n%s", resp.body, lastLog(s.gw))
			require.Equal(t, n+1, s.backend.count())
			mt, params, err := mime.ParseMediaType(s.backend.last().Header.Get("Content-Type"))
			require.NoError(t, err)
			want, _, _ := mime.ParseMediaType(c.ct)
			assert.Equal(t, want, mt)
			assert.Equal(t, "utf-8", params["charset"], "the forwarded Content-Type says charset=utf-8: %q", s.backend.last().Header.Get("Content-Type"))
			assert.Equal(t, c.action, params["action"], "SOAP 1.2 action kept")
		})
	}
}

// version is item 6 (contract 5): the envelope's version is the one the
// Content-Type announces.
func (s *bypassSuite) version(t *testing.T) {
	for _, v := range []struct{ name, ns string }{{"soap1.1", soap.NS11}, {"soap1.2", soap.NS12}} {
		labels, err := attack.Labels(s.pki.sign(t, v.ns, nil))
		require.NoError(t, err)
		for _, l := range labels {
			if !l.VersionMismatch {
				continue
			}
			for _, route := range []string{"/orders", "/public", "/open"} {
				t.Run("fail/"+v.name+route+"/"+l.Name, func(t *testing.T) {
					n := s.backend.count()
					body := s.pki.sign(t, v.ns, nil)
					if route != "/orders" {
						body = plainEnvelope(v.ns, `<m:Echo xmlns:m="urn:e2e"/>`)
					}
					resp, _ := s.post(t, s.gw, route, l.ContentType, body)
					s.nothingForwarded(t, n)
					assert.Equal(t, http.StatusInternalServerError, resp.status, "%s", resp.body)
					assert.True(t, strings.HasSuffix(soapFaultCode(t, resp), ":VersionMismatch"), "a VersionMismatch fault: %s", resp.body)
					s.faults.add("version", l.Name, resp)
				})
			}
		}
	}
}

// envelopeText is item 7 (contract 6): character data, CDATA (with a fake
// Body) and comments around the signed parts. On the secured route the
// uniform fault; on a policy-none route the gate's fault.
func (s *bypassSuite) envelopeText(t *testing.T) {
	for _, v := range []struct{ name, ns, version string }{{"soap1.1", soap.NS11, "1.1"}, {"soap1.2", soap.NS12, "1.2"}} {
		catalogue, err := attack.Mutate(s.pki.sign(t, v.ns, nil))
		require.NoError(t, err)
		for _, mu := range catalogue {
			if mu.Family != attack.FamilyEnvelope {
				continue
			}
			name := mu.Name
			t.Run("fail/"+v.name+"/orders/"+name, func(t *testing.T) {
				// A fresh message for each: an accepted mutant would
				// put its signature in the replay cache and mask the
				// next one.
				ms, err := attack.Mutate(s.pki.sign(t, v.ns, nil))
				require.NoError(t, err)
				data := mutantNamed(t, ms, name)
				n := s.backend.count()
				resp, _ := s.post(t, s.gw, "/orders", contentType(v.version), data)
				s.nothingForwarded(t, n)
				s.securityFault(t, name, resp, v.version)
			})
		}
		for _, name := range []string{"env/text-before-header", "env/cdata-fake-body-between-header-and-body", "env/text-after-body",
			"env/comment-before-security", "env/escaped-body-after-security"} {
			t.Run("fail/"+v.name+"/public/"+name, func(t *testing.T) {
				ms, err := attack.Mutate(s.pki.sign(t, v.ns, nil))
				require.NoError(t, err)
				n := s.backend.count()
				resp, _ := s.post(t, s.gw, "/public", contentType(v.version), mutantNamed(t, ms, name))
				s.nothingForwarded(t, n)
				requestFault(t, resp, http.StatusBadRequest, "")
				s.faults.add("gate", name, resp)
			})
		}
	}
}

// unsignedContent is item 8 (contract 8): unsigned header blocks and
// Envelope/Header attributes. The default (strip) forwards the verified
// message without them.
func (s *bypassSuite) unsignedContent(t *testing.T) {
	for _, v := range []struct{ name, ns, version string }{{"soap1.1", soap.NS11, "1.1"}, {"soap1.2", soap.NS12, "1.2"}} {
		injs, err := attack.Injections(s.pki.sign(t, v.ns, nil))
		require.NoError(t, err)
		for _, in := range injs {
			name := in.Name
			t.Run("ok/strip-default/"+v.name+"/"+name, func(t *testing.T) {
				msg := s.pki.sign(t, v.ns, nil)
				inj := injectionNamed(t, msg, name)
				n := s.backend.count()
				resp, _ := s.post(t, s.gw, "/orders", contentType(v.version), inj.Data)
				require.Equal(t, http.StatusOK, resp.status, "%s\n%s", resp.body, lastLog(s.gw))
				require.Equal(t, n+1, s.backend.count())
				got := string(s.backend.last().Body)
				assert.Contains(t, got, signedBody(t, msg), "the signed Body arrives byte for byte")
				for _, frag := range inj.Injected {
					assert.NotContains(t, got, frag, "SECURITY: unsigned content reached the backend")
				}
			})
		}
	}
	// The other modes need configuration keys of issue 13.
	t.Run("modes", func(t *testing.T) {
		policy := func(name, keys string) string {
			return fmt.Sprintf("  %s:\n    require: [signature, timestamp]\n    trust: {caFiles: [%s]}\n%s\n", name, s.pki.ca, keys)
		}
		g := startGateway(t, s.pki.bypassConfig(s.backend.URL, bypassOptions{
			routes: fmt.Sprintf("  - {name: strict, path: /strict, backend: %[1]s, policy: strict}\n"+
				"  - {name: allowed, path: /allowed, backend: %[1]s, policy: allowed}\n"+
				"  - {name: legacy, path: /legacy, backend: %[1]s, policy: legacy}\n", s.backend.URL),
			policies: policy("strict", "    unsignedHeaders: reject") +
				policy("allowed", `    unsignedHeaders: reject
    unsignedAllow: ["{urn:x}Admin", "{urn:y}role", "{http://www.w3.org/2005/08/addressing}To", "{`+soap.NS11+`}encodingStyle"]`) +
				policy("legacy", "    unsignedHeaders: forward"),
		}))
		injs, err := attack.Injections(s.pki.sign(t, soap.NS11, nil))
		require.NoError(t, err)
		for _, in := range injs {
			name := in.Name
			t.Run("fail/reject/"+name, func(t *testing.T) {
				n := s.backend.count()
				resp, _ := s.post(t, g, "/strict", ct11, injectionNamed(t, s.pki.sign(t, soap.NS11, nil), name).Data)
				s.nothingForwarded(t, n)
				s.securityFault(t, name, resp, "1.1")
			})
			for _, route := range []string{"/allowed", "/legacy"} {
				t.Run("ok"+route+"/"+name, func(t *testing.T) {
					n := s.backend.count()
					inj := injectionNamed(t, s.pki.sign(t, soap.NS11, nil), name)
					resp, _ := s.post(t, g, route, ct11, inj.Data)
					require.Equal(t, http.StatusOK, resp.status, "%s\n%s", resp.body, lastLog(g))
					require.Equal(t, n+1, s.backend.count())
					for _, frag := range inj.Injected {
						assert.Contains(t, string(s.backend.last().Body), frag)
					}
				})
			}
		}
		t.Run("ok/reject-signed-header-passes", func(t *testing.T) {
			// A header block the signature covers is not unsigned.
			wsa := "http://www.w3.org/2005/08/addressing"
			env := []byte(`<soapenv:Envelope xmlns:soapenv="` + soap.NS11 + `"><soapenv:Header><wsa:To xmlns:wsa="` + wsa +
				`">urn:orders</wsa:To></soapenv:Header><soapenv:Body><m:Echo xmlns:m="urn:e2e">signed-header</m:Echo></soapenv:Body></soapenv:Envelope>`)
			o := signer.DefaultOptions()
			o.Signer, o.Certificate = s.pki.client.Key, s.pki.client.Cert
			o.SignHeaders = append(o.SignHeaders, xml.Name{Space: wsa, Local: "To"})
			msg, err := signer.Secure(env, o)
			require.NoError(t, err)
			resp, _ := s.post(t, g, "/strict", ct11, msg)
			require.Equal(t, http.StatusOK, resp.status, "%s\n%s", resp.body, lastLog(g))
			assert.Contains(t, string(s.backend.last().Body), "urn:orders</wsa:To>")
		})
	})
}

// gatePolicyNone is item 9 (contract 7): the strict gate on routes that
// verify nothing.
func (s *bypassSuite) gatePolicyNone(t *testing.T) {
	xxe := func(ns, extra string) []byte {
		return []byte(`<?xml version="1.0" encoding="UTF-8"?><!DOCTYPE soapenv:Envelope [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>` +
			`<soapenv:Envelope xmlns:soapenv="` + ns + `"><soapenv:Header>` + extra + `</soapenv:Header><soapenv:Body><m:Echo xmlns:m="urn:e2e">&xxe;</m:Echo></soapenv:Body></soapenv:Envelope>`)
	}
	lol := []byte(`<?xml version="1.0"?><!DOCTYPE soapenv:Envelope [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>` +
		`<soapenv:Envelope xmlns:soapenv="` + soap.NS11 + `"><soapenv:Body><m:Echo xmlns:m="urn:e2e">&c;</m:Echo></soapenv:Body></soapenv:Envelope>`)
	for _, c := range []struct {
		name, route string
		body        []byte
	}{
		{"public-doctype-xxe", "/public", xxe(soap.NS11, "")},
		{"wsdl-doctype-xxe", "/orders/wsdl", xxe(soap.NS11, "")},
		{"public-entity-expansion", "/public", lol},
		{"public-utf-16-declared", "/public", []byte(`<?xml version="1.0" encoding="UTF-16"?>` + string(s.unsigned[len(`<?xml version="1.0" encoding="UTF-8"?>`):]))},
	} {
		t.Run("fail/"+c.name, func(t *testing.T) {
			n := s.backend.count()
			resp, _ := s.post(t, s.gw, c.route, ct11, c.body)
			s.nothingForwarded(t, n)
			requestFault(t, resp, http.StatusBadRequest, "")
			s.faults.add("gate", c.name, resp)
		})
	}
	t.Run("fail/public-mtom-root-doctype", func(t *testing.T) {
		pkg := mtomPackage([]mtomPart{
			{mtomRootCID, `application/xop+xml; charset=UTF-8; type="text/xml"`, xxe(soap.NS11, "")},
			{mtomAttCID, "application/octet-stream", attachmentData(64)},
		})
		n := s.backend.count()
		resp, _ := s.post(t, s.gw, "/public", mtomContentType(), pkg)
		s.nothingForwarded(t, n)
		requestFault(t, resp, http.StatusBadRequest, "")
		s.faults.add("gate", "mtom", resp)
	})
	// A policy that requires nothing forwards a message without
	// WS-Security unparsed: it is gated too, and answered with the
	// fault the same route gives a gated message that does carry the
	// WS-Security namespace (one route, one fault: no oracle).
	t.Run("fail/require-nothing-doctype-xxe", func(t *testing.T) {
		n := s.backend.count()
		plain, _ := s.post(t, s.gw, "/open", ct11, xxe(soap.NS11, ""))
		withWSSE, _ := s.post(t, s.gw, "/open", ct11, xxe(soap.NS11, `<wsse:Security xmlns:wsse="`+attack.NSWSSE+`"/>`))
		s.nothingForwarded(t, n)
		require.NotEqual(t, http.StatusOK, withWSSE.status)
		assert.Equal(t, withWSSE.status, plain.status, "%s", plain.body)
		a, _ := withoutCorrelationID(plain.body)
		b, _ := withoutCorrelationID(withWSSE.body)
		assert.Equal(t, b, a, "the same fault for both")
		s.faults.add("require-nothing-gate", "doctype", plain)
	})
	// The envelope rule too: text before the Header of a message without
	// WS-Security that /open would forward unparsed.
	t.Run("fail/require-nothing-envelope-text", func(t *testing.T) {
		n := s.backend.count()
		data := strings.Replace(string(s.unsigned), "<soapenv:Header/>", "attack<soapenv:Header/>", 1)
		require.NotEqual(t, string(s.unsigned), data)
		resp, _ := s.post(t, s.gw, "/open", ct11, []byte(data))
		s.nothingForwarded(t, n)
		require.NotEqual(t, http.StatusOK, resp.status, "%s", resp.body)
		s.faults.add("require-nothing-gate", "envelope-text", resp)
	})
	t.Run("ok/public-plain", func(t *testing.T) {
		n := s.backend.count()
		resp, _ := s.post(t, s.gw, "/public", ct11, s.unsigned)
		require.Equal(t, http.StatusOK, resp.status, "%s", resp.body)
		require.Equal(t, n+1, s.backend.count())
		assert.Equal(t, string(s.unsigned), string(s.backend.last().Body), "a clean message passes byte for byte")
	})
	t.Run("ok/unsafe-skip-gate", func(t *testing.T) {
		g := startGateway(t, s.pki.bypassConfig(s.backend.URL, bypassOptions{
			routes: "  - {name: raw, path: /raw, backend: " + s.backend.URL + ", policy: none, unsafeSkipGate: true}\n"}))
		n := s.backend.count()
		resp, _ := s.post(t, g, "/raw", ct11, xxe(soap.NS11, ""))
		require.Equal(t, http.StatusOK, resp.status, "%s\n%s", resp.body, lastLog(g))
		require.Equal(t, n+1, s.backend.count(), "the documented opt-out forwards ungated")
	})
	t.Run("fail/unsafe-skip-gate-needs-policy-none", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "bad.yaml")
		require.NoError(t, os.WriteFile(file, []byte(strings.Replace(s.pki.bypassConfig(s.backend.URL, bypassOptions{}),
			"policy: signed,", "policy: signed, unsafeSkipGate: true,", 1)), 0o600))
		out, _, code := runCLI(t, nil, "validate", "--config", file)
		assert.Equal(t, 1, code)
		// The key path is matched without case: viper folds the key
		// names it does not know.
		assert.Contains(t, strings.ToLower(out), "routes[1].unsafeskipgate", "%s", out)
		assert.NotContains(t, out, "unknown key", "the key exists")
	})
}

// encryptedKeys is item 10 (contract 10): EncryptedKeys are bounded and
// nothing is unwrapped for a message the policy refuses on structure alone.
func (s *bypassSuite) encryptedKeys(t *testing.T) {
	t.Run("fail/unsigned-many-encryptedkeys", func(t *testing.T) {
		msg := manyEncryptedKeys(t, s.pki, 64)
		decrypts := stageCount(t, s.gw, "orders", metrics.StageDecrypt)
		n := s.backend.count()
		start := time.Now()
		resp, id := s.post(t, s.gw, "/orders", ct11, msg)
		elapsed := time.Since(start)
		s.nothingForwarded(t, n)
		s.securityFault(t, "encrypted-keys", resp, "1.1")
		line := logLine(t, s.gw, id)
		errText, _ := line["error"].(string)
		assert.Regexp(t, `(?i)encrypted[ _-]?keys?`, errText, "the log names the bound")
		assert.Equal(t, decrypts, stageCount(t, s.gw, "orders", metrics.StageDecrypt), "no key was unwrapped for it")
		t.Logf("rejected in %v: %s", elapsed.Round(time.Millisecond), errText)
	})
	t.Run("configured-bound", func(t *testing.T) {
		g := startGateway(t, s.pki.bypassConfig(s.backend.URL, bypassOptions{top: "xml: {maxEncryptedKeys: 2}"}))
		encrypted := func(o *signer.Options) { o.EncryptFor = s.pki.server.Cert }
		t.Run("ok/one-encryptedkey", func(t *testing.T) {
			resp, _ := s.post(t, g, "/orders", ct11, s.pki.sign(t, soap.NS11, encrypted))
			require.Equal(t, http.StatusOK, resp.status, "%s\n%s", resp.body, lastLog(g))
		})
		t.Run("fail/three-encryptedkeys-signed", func(t *testing.T) {
			// A signed message: the bound holds whatever else is right.
			msg := string(s.pki.sign(t, soap.NS11, encrypted))
			ek := encryptedKeyRE.FindString(msg)
			require.NotEmpty(t, ek)
			copies := ""
			for i := 1; i < 3; i++ {
				c := referenceRE.ReplaceAllLiteralString(ek, "")
				copies += regexp.MustCompile(` Id="([^"]+)"`).ReplaceAllString(c, fmt.Sprintf(` Id="${1}-%d"`, i))
			}
			n := s.backend.count()
			resp, id := s.post(t, g, "/orders", ct11, []byte(strings.Replace(msg, ek, ek+copies, 1)))
			s.nothingForwarded(t, n)
			s.securityFault(t, "encrypted-keys-bound", resp, "1.1")
			errText, _ := logLine(t, g, id)["error"].(string)
			assert.Regexp(t, `(?i)encrypted[ _-]?keys?`, errText, "the log names the bound")
		})
	})
}

// danglingEncryptedKey is item 11 (contract 11): an EncryptedData whose
// KeyInfo names an EncryptedKey that is not in the message.
func (s *bypassSuite) danglingEncryptedKey(t *testing.T) {
	encrypted := func(t *testing.T) []byte {
		return s.pki.sign(t, soap.NS11, func(o *signer.Options) { o.EncryptFor = s.pki.server.Cert })
	}
	t.Run("ok/control", func(t *testing.T) {
		resp, _ := s.post(t, s.gw, "/orders", ct11, encrypted(t))
		require.Equal(t, http.StatusOK, resp.status, "%s\n%s", resp.body, lastLog(s.gw))
	})
	for _, c := range []struct {
		name string
		edit func(t *testing.T, body, ek string) string
	}{
		{"str-reference", func(t *testing.T, body, ek string) string {
			return strings.Replace(body, `URI="#`+ek+`"`, `URI="#EK-not-in-the-message"`, 1)
		}},
		{"retrieval-method", func(t *testing.T, body, ek string) string {
			re := regexp.MustCompile(`(?s)<ds:KeyInfo xmlns:ds="[^"]*">.*?</ds:KeyInfo>`)
			require.True(t, re.MatchString(body))
			return re.ReplaceAllLiteralString(body, `<ds:KeyInfo xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:RetrievalMethod URI="#EK-not-in-the-message" Type="http://www.w3.org/2001/04/xmlenc#EncryptedKey"/></ds:KeyInfo>`)
		}},
	} {
		t.Run("fail/"+c.name, func(t *testing.T) {
			msg := string(encrypted(t))
			ek := regexp.MustCompile(`<xenc:EncryptedKey[^>]* Id="([^"]+)"`).FindStringSubmatch(msg)
			require.NotNil(t, ek)
			i := strings.Index(msg, "<soapenv:Body")
			require.Positive(t, i)
			body := c.edit(t, msg[i:], ek[1])
			require.NotEqual(t, msg[i:], body)
			n := s.backend.count()
			resp, _ := s.post(t, s.gw, "/orders", ct11, []byte(msg[:i]+body))
			s.nothingForwarded(t, n)
			s.securityFault(t, "dangling", resp, "1.1")
		})
	}
}

// expires2300 is item 12 (contract 9): a Timestamp that expires after 2262
// (past int64 nanoseconds) is accepted once, then a replay, not an internal
// error.
func (s *bypassSuite) expires2300(t *testing.T) {
	far := func(o *signer.Options) { o.TTL = time.Until(time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)) }
	run := func(t *testing.T, g *gateway) {
		msg := s.pki.sign(t, soap.NS11, far)
		require.Regexp(t, `<wsu:Expires>2(299-12-31|300-01-01)T`, string(msg))
		n := s.backend.count()
		resp, _ := s.post(t, g, "/orders", ct11, msg)
		require.Equal(t, http.StatusOK, resp.status, "accepted once: %s\n%s", resp.body, lastLog(g))
		require.Equal(t, n+1, s.backend.count())
		resp, id := s.post(t, g, "/orders", ct11, msg)
		s.nothingForwarded(t, n+1)
		s.securityFault(t, "expires-2300", resp, "1.1")
		assert.Equal(t, "replay", requestReason(t, g, id))
	}
	t.Run("ok/memory-store", func(t *testing.T) { run(t, s.gw) })
	t.Run("ok/redis-store", func(t *testing.T) {
		addr := replaytest.StartRedis(t)
		run(t, startGateway(t, s.pki.bypassConfig(s.backend.URL, bypassOptions{top: redisReplay(addr)})))
	})
}

// admin is item 13 (contract 12): the admin listener's template export and
// import, which hold real accepted partner messages, are off unless enabled.
func (s *bypassSuite) admin(t *testing.T) {
	t.Run("fail/templates-off-by-default", func(t *testing.T) {
		for _, p := range []string{"/templates", "/templates/export"} {
			status, _ := get(t, s.gw.admin+p)
			assert.Equal(t, http.StatusNotFound, status, "GET %s", p)
		}
		resp, err := http.Post(s.gw.admin+"/templates/import", "application/json", strings.NewReader("[]"))
		require.NoError(t, err)
		readAll(t, resp)
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, "POST /templates/import")
	})
	t.Run("ok/templates-enabled", func(t *testing.T) {
		g := startGateway(t, s.pki.bypassConfig(s.backend.URL, bypassOptions{admin: "templates: true"}))
		status, body := get(t, g.admin+"/templates/export")
		assert.Equal(t, http.StatusOK, status, "%s", body)
	})
}

// backendSawOnlyVerifiedOrders checks across every case that whatever
// reached the backend as /orders (however the backend normalized the path)
// was verified by the gateway: it carries the verified subject; and that no
// bytes were ever tunnelled.
func (s *bypassSuite) backendSawOnlyVerifiedOrders(t *testing.T) {
	s.backend.settle(t)
	for _, r := range s.backend.since(0) {
		if underOrders(r.Path) {
			assert.Equal(t, []string{"CN=client"}, r.Header.Values("X-Wss-Subject"),
				"SECURITY: %s %s reached /orders without the verified subject", r.Method, r.Target)
			assert.NotContains(t, string(r.Body), "UNSIGNED", "SECURITY: an unsigned message reached /orders via %s", r.Target)
		}
	}
	assert.Empty(t, string(s.backend.tunnel()), "SECURITY: bytes tunnelled to the backend")
}

// mutantNamed returns the data of the mutant called name.
func mutantNamed(t *testing.T, ms []attack.Mutant, name string) []byte {
	t.Helper()
	for _, m := range ms {
		if m.Name == name {
			return m.Data
		}
	}
	t.Fatalf("no mutant %s", name)
	return nil
}

// injectionNamed returns msg's injection called name.
func injectionNamed(t *testing.T, msg []byte, name string) attack.Injection {
	t.Helper()
	injs, err := attack.Injections(msg)
	require.NoError(t, err)
	for _, in := range injs {
		if in.Name == name {
			return in
		}
	}
	t.Fatalf("no injection %s", name)
	return attack.Injection{}
}

var (
	signatureRE    = regexp.MustCompile(`(?s)<ds:Signature[ >].*</ds:Signature>`)
	encryptedKeyRE = regexp.MustCompile(`(?s)<xenc:EncryptedKey[ >].*?</xenc:EncryptedKey>`)
	referenceRE    = regexp.MustCompile(`(?s)<xenc:ReferenceList>.*?</xenc:ReferenceList>`)
)

// manyEncryptedKeys is issue 13 item 10's hostile message: unsigned (the
// policy requires a signature), with n EncryptedKeys wrapped for wssgw's
// real key, so that each costs an RSA private-key operation if unwrapped.
// The first keeps its ReferenceList; the copies reference nothing.
func manyEncryptedKeys(t *testing.T, pki *bypassPKI, n int) []byte {
	t.Helper()
	msg := string(pki.sign(t, soap.NS11, func(o *signer.Options) { o.EncryptFor = pki.server.Cert }))
	msg = signatureRE.ReplaceAllLiteralString(msg, "")
	ek := encryptedKeyRE.FindString(msg)
	require.NotEmpty(t, ek)
	id := regexp.MustCompile(` Id="([^"]+)"`).FindStringSubmatch(ek)
	require.NotNil(t, id)
	var copies strings.Builder
	for i := 1; i < n; i++ {
		c := referenceRE.ReplaceAllLiteralString(ek, "")
		copies.WriteString(strings.Replace(c, ` Id="`+id[1]+`"`, fmt.Sprintf(` Id="%s-%d"`, id[1], i), 1))
	}
	out := strings.Replace(msg, ek, ek+copies.String(), 1)
	require.Equal(t, n, strings.Count(out, "<xenc:EncryptedKey"))
	return []byte(out)
}
