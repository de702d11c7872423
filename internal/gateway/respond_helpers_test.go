package gateway

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/dom"
	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/reload"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/testpki"
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// signingPKI: the partner signs requests (RSA, so responses can be
// encrypted for it), the gateway signs responses (ECDSA).
type signingPKI struct {
	caFile           string
	partner, gateway *testpki.Leaf
}

func newSigningPKI(t *testing.T) *signingPKI {
	t.Helper()
	dir := t.TempDir()
	ca := testpki.NewCA(t, "wssgw respond CA")
	return &signingPKI{caFile: ca.WriteCert(t, dir), partner: ca.IssueRSA(t, dir, "partner"), gateway: ca.Issue(t, dir, "gateway")}
}

// newSigningFront is a gateway whose route verifies signed requests and
// signs responses as responses says.
func newSigningFront(t *testing.T, backend string, k *signingPKI, responses func(r *config.Responses)) *front {
	t.Helper()
	return newSigningFrontConfig(t, backend, k, responses, nil)
}

// newSigningFrontConfig is newSigningFront with the rest of the
// configuration adjusted by more (when not nil).
func newSigningFrontConfig(t *testing.T, backend string, k *signingPKI, responses func(r *config.Responses), more func(c *config.Config)) *front {
	t.Helper()
	cfg := config.Default()
	p := config.DefaultPolicy()
	p.Trust.CAFiles = []string{k.caFile}
	p.Responses.Sign, p.Responses.CertFile, p.Responses.KeyFile = true, k.gateway.CertFile, k.gateway.KeyFile
	if responses != nil {
		responses(&p.Responses)
	}
	cfg.Policies = map[string]config.Policy{"partner": p}
	cfg.Routes = []config.Route{{Name: "orders", Path: "/orders", Backend: backend, Policy: "partner"}}
	if more != nil {
		more(&cfg)
	}
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

// signedRequest is a request envelope signed by the partner.
func signedRequest(t *testing.T, k *signingPKI) []byte {
	t.Helper()
	o := signer.DefaultOptions()
	o.Signer, o.Certificate = k.partner.Key, k.partner.Cert
	env := `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><m:GetFiles xmlns:m="urn:example:files"/></soapenv:Body></soapenv:Envelope>`
	out, err := signer.Secure([]byte(env), o)
	require.NoError(t, err)
	return out
}

func post(t *testing.T, url string, body []byte) *http.Response {
	t.Helper()
	resp, err := http.Post(url+"/orders", "text/xml; charset=utf-8", bytes.NewReader(body))
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// responseVerifier is the partner's side: it trusts the CA, decrypts with
// its own key and runs the repo's DOM engine on the response.
func responseVerifier(t *testing.T, k *signingPKI) func(msg []byte) (*wss.Result, error) {
	t.Helper()
	p := config.DefaultPolicy()
	p.Replay = "off"
	p.Trust.CAFiles = []string{k.caFile}
	p.Trust.KnownCertFiles = []string{k.gateway.CertFile} // for issuer-serial references
	p.DecryptionKeys = []config.KeyFiles{{CertFile: k.partner.CertFile, KeyFile: k.partner.KeyFile}}
	pol, err := wss.Compile("client", p, nil, reload.Options{})
	require.NoError(t, err)
	e, err := dom.New(xmlscan.DefaultConfig())
	require.NoError(t, err)
	return func(msg []byte) (*wss.Result, error) {
		res, _, err := pol.Verify(context.Background(), e, msg, time.Now())
		return res, err
	}
}

// signingResult reads wssgw_response_signing_total for the route.
func (f *front) signingResult(t *testing.T, result string) float64 {
	t.Helper()
	fams, err := f.metrics.Registry().Gather()
	require.NoError(t, err)
	for _, fam := range fams {
		if fam.GetName() != metrics.NameResponseSigning {
			continue
		}
		for _, m := range fam.Metric {
			labels := map[string]string{}
			for _, l := range m.Label {
				labels[l.GetName()] = l.GetValue()
			}
			if labels[metrics.LabelRoute] == "orders" && labels[metrics.LabelResult] == result {
				return m.Counter.GetValue()
			}
		}
	}
	t.Fatalf("no series for result %s", result)
	return 0
}

var xopIncludeRE = regexp.MustCompile(`<xop:Include [^>]*?href="cid:([^"]+)"[^>]*?(?:/>|></xop:Include>)`)

// reassembleMTOM turns a streamed response into the standard message: the
// last part put back into the ds:Signature, the attachments inlined as
// base64 (the XOP infoset). It also returns the parts' Content-IDs.
func reassembleMTOM(t *testing.T, contentType string, body []byte) ([]byte, []string) {
	t.Helper()
	_, params, err := mime.ParseMediaType(contentType)
	require.NoError(t, err)
	r := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	var parts [][]byte
	var cids []string
	atts := map[string][]byte{}
	for {
		p, err := r.NextRawPart()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		b, err := io.ReadAll(p)
		require.NoError(t, err)
		cid := strings.Trim(p.Header.Get("Content-ID"), "<>")
		parts, cids, atts[cid] = append(parts, b), append(cids, cid), b
	}
	require.GreaterOrEqual(t, len(parts), 2)
	root := parts[0]
	sig := bytes.Index(root, []byte("<ds:Signature "))
	require.Positive(t, sig)
	m := xopIncludeRE.FindIndex(root[sig:])
	require.NotNil(t, m)
	root = append(append(bytes.Clone(root[:sig+m[0]]), parts[len(parts)-1]...), root[sig+m[1]:]...)
	root = xopIncludeRE.ReplaceAllFunc(root, func(inc []byte) []byte {
		return []byte(base64.StdEncoding.EncodeToString(atts[string(xopIncludeRE.FindSubmatch(inc)[1])]))
	})
	return root, cids
}
