package gateway

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/dom"
	"github.com/wssgw/wssgw/internal/metrics"
	wmime "github.com/wssgw/wssgw/internal/mime"
	"github.com/wssgw/wssgw/internal/reload"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/testpki"
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// egressPartner is a partner service: it verifies the request as its own
// WS-Security stack would (the test CA), records the signer, and answers
// signed by partner.
type egressPartner struct {
	srv     *httptest.Server
	mu      sync.Mutex
	signers []string // SHA-256 of each request's verified signer
}

func newEgressPartner(t *testing.T, caFile string, partner *testpki.Leaf) *egressPartner {
	t.Helper()
	cp := config.DefaultPolicy()
	cp.Replay = "off"
	cp.Trust.CAFiles = []string{caFile}
	pol, err := wss.Compile("partner", cp, nil, reload.Options{})
	require.NoError(t, err)
	e, err := dom.New(xmlscan.DefaultConfig())
	require.NoError(t, err)
	p := &egressPartner{}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var (
			res *wss.Result
			err error
		)
		if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/related") {
			var pkg *wmime.Package
			lim := wmime.DefaultLimits()
			lim.SpoolDir = t.TempDir()
			if pkg, err = wmime.Read(r.Context(), r.Body, r.Header.Get("Content-Type"), lim); err == nil {
				res, _, err = pol.VerifyAttachments(r.Context(), e, pkg.RootBytes, wss.PackageAttachments(pkg, ""), time.Now())
				pkg.Close()
			}
		} else {
			body, _ := io.ReadAll(r.Body)
			res, _, err = pol.Verify(context.Background(), e, body, time.Now())
		}
		if r.Header.Get("X-Forwarded-For") != "" || r.Header.Get("X-Forwarded-Host") != "" {
			err = errors.New("the partner learns the internal client's address")
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusForbidden)
			return
		}
		p.mu.Lock()
		p.signers = append(p.signers, res.Signer().SHA256)
		p.mu.Unlock()
		o := signer.DefaultOptions()
		o.Signer, o.Certificate = partner.Key, partner.Cert
		out, err := signer.Secure([]byte(`<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><m:Done xmlns:m="urn:x"/></soapenv:Body></soapenv:Envelope>`), o)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/xml; charset=utf-8")
		_, _ = w.Write(out)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *egressPartner) lastSigner() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.signers[len(p.signers)-1]
}

// egressConfig is one egress route to partner, signing with the gw files,
// the responses verified against trust in caFile.
func egressConfig(t testing.TB, partner, caFile string, gw *testpki.Leaf) *config.Config {
	t.Helper()
	c := config.Default()
	p := config.DefaultPolicy()
	p.Trust.CAFiles = []string{caFile}
	c.Policies = map[string]config.Policy{"partner": p}
	r := config.Route{Name: "out", Path: "/out", Backend: partner, Kind: config.KindEgress}
	r.Egress = config.DefaultEgress()
	r.Egress.Sign.CertFile, r.Egress.Sign.KeyFile = gw.CertFile, gw.KeyFile
	r.Egress.Response.Policy = "partner"
	c.Routes = []config.Route{r}
	c.ApplyDefaults()
	require.NoError(t, c.Validate())
	return &c
}

// TestEgressReload: an egress route is rebuilt by a configuration reload
// like any route: a signing key rotated in place is used from the reload
// on, a changed response trust takes effect (the partner's responses are
// then refused with the 502 fault), and reloads leak no pollers.
func TestEgressReload(t *testing.T) {
	dir := t.TempDir()
	ca := testpki.NewCA(t, "egress CA")
	other := testpki.NewCA(t, "other CA")
	caFile, otherFile := ca.WriteCert(t, dir), other.WriteCert(t, t.TempDir())
	gw := ca.Issue(t, dir, "gw")
	partner := newEgressPartner(t, caFile, ca.IssueRSA(t, dir, "partner"))
	s := newReloadable(t, egressConfig(t, partner.srv.URL, caFile, gw))

	status, body := s.call(t, "/out")
	require.Equal(t, http.StatusOK, status, body)
	assert.Contains(t, body, "<m:Done")
	assert.NotContains(t, body, "Security")
	first := partner.lastSigner()

	// Rotate the signing key pair in place (a renewed Secret) and reload.
	gw2 := ca.Issue(t, dir, "gw")
	require.Equal(t, gw.CertFile, gw2.CertFile)
	require.NoError(t, s.reload(egressConfig(t, partner.srv.URL, caFile, gw2), nil))
	status, body = s.call(t, "/out")
	require.Equal(t, http.StatusOK, status, body)
	assert.NotEqual(t, first, partner.lastSigner(), "the rotated key signs after the reload")

	// The response policy trusts another CA now: the partner's answer is
	// refused, and counted.
	require.NoError(t, s.reload(egressConfig(t, partner.srv.URL, otherFile, gw2), nil))
	status, body = s.call(t, "/out")
	assert.Equal(t, http.StatusBadGateway, status)
	assert.NotContains(t, body, "m:Done")
	assert.Equal(t, 1.0, gathered(t, s.metrics, metrics.NameEgressRequests, map[string]string{"route": "out", "result": metrics.EgressRejected}))

	// Reloads stop the replaced routes' key pollers.
	time.Sleep(100 * time.Millisecond)
	base := runtime.NumGoroutine()
	for i := range 10 {
		prev := s.live.Load()
		trust := caFile
		if i%2 == 0 {
			trust = otherFile
		}
		require.NoError(t, s.reload(egressConfig(t, partner.srv.URL, trust, gw2), nil))
		<-prev.drained
	}
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > base+3 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), base+3, "goroutines: %d before 10 reloads", base)
}

// TestEgressMTOMRequest: the legacy client's MTOM request is signed over
// its XOP infoset, the attachment sent unchanged, and the partner verifies
// it; a package whose attachment nothing includes, a malformed one, and
// one on a route that encrypts are refused (400) and counted.
func TestEgressMTOMRequest(t *testing.T) {
	dir := t.TempDir()
	ca := testpki.NewCA(t, "egress CA")
	caFile := ca.WriteCert(t, dir)
	partnerKey := ca.IssueRSA(t, dir, "partner")
	partner := newEgressPartner(t, caFile, partnerKey)
	cfg := egressConfig(t, partner.srv.URL, caFile, ca.Issue(t, dir, "gw"))
	encrypting := egressConfig(t, partner.srv.URL, caFile, ca.Issue(t, dir, "gw"))
	encrypting.Routes[0].Name, encrypting.Routes[0].Path = "enc", "/enc"
	encrypting.Routes[0].Egress.Encrypt.PartnerCertFile = partnerKey.CertFile
	cfg.Routes = append(cfg.Routes, encrypting.Routes[0])
	require.NoError(t, cfg.Validate())
	s := newReloadable(t, cfg)

	const ct = `multipart/related; type="application/xop+xml"; boundary=b; start="<root@x>"; start-info="text/xml"`
	pkg := func(root, cid string) string {
		return "--b\r\nContent-Type: application/xop+xml; charset=UTF-8; type=\"text/xml\"\r\nContent-ID: <root@x>\r\n\r\n" + root +
			"\r\n--b\r\nContent-Type: application/octet-stream\r\nContent-ID: <" + cid + ">\r\n\r\n" + strings.Repeat("\x00\x01bin", 100) + "\r\n--b--\r\n"
	}
	root := `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><m:Put xmlns:m="urn:x">` +
		`<xop:Include xmlns:xop="http://www.w3.org/2004/08/xop/include" href="cid:att@x"/></m:Put></soapenv:Body></soapenv:Envelope>`
	post := func(path, body string) (int, string) {
		resp, err := http.Post(s.url+path, ct, strings.NewReader(body))
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	status, body := post("/out", pkg(root, "att@x"))
	require.Equal(t, http.StatusOK, status, body)
	assert.Contains(t, body, "<m:Done", "the partner verified the package and answered")

	for name, tc := range map[string]struct{ path, body string }{
		"fail/attachment-not-included": {"/out", pkg(strings.Replace(root, `<xop:Include xmlns:xop="http://www.w3.org/2004/08/xop/include" href="cid:att@x"/>`, "", 1), "att@x")},
		"fail/malformed":               {"/out", "--b\r\nno header end"},
		"fail/encrypting-route":        {"/enc", pkg(root, "att@x")},
	} {
		t.Run(name, func(t *testing.T) {
			status, body := post(tc.path, tc.body)
			assert.Equal(t, http.StatusBadRequest, status, body)
		})
	}
	assert.Equal(t, 2.0, gathered(t, s.metrics, metrics.NameEgressRequests, map[string]string{"route": "out", "result": metrics.EgressSecureFailed}))
	assert.Equal(t, 1.0, gathered(t, s.metrics, metrics.NameEgressRequests, map[string]string{"route": "enc", "result": metrics.EgressSecureFailed}))
}
