package gateway

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/metrics"
	wmime "github.com/wssgw/wssgw/internal/mime"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/testnet"
	"github.com/wssgw/wssgw/internal/testpki"
	"github.com/wssgw/wssgw/internal/wss"
)

const mtomTestBoundary = "mtom-unit-boundary"

var mtomTestType = `multipart/related; type="application/xop+xml"; start="<root@unit>"; start-info="text/xml"; boundary=` + mtomTestBoundary

// mtomTestPackage is a package of a root and one attachment data@unit.
func mtomTestPackage(root, data []byte) []byte {
	return fmt.Appendf(nil, "--%[1]s\r\nContent-Type: application/xop+xml; type=\"text/xml\"\r\nContent-ID: <root@unit>\r\n\r\n%[2]s\r\n"+
		"--%[1]s\r\nContent-Type: application/octet-stream\r\nContent-ID: <data@unit>\r\n\r\n%[3]s\r\n--%[1]s--\r\n",
		mtomTestBoundary, root, data)
}

// signedMTOM signs an envelope whose Body inlines the base64 of data and
// replaces it by an xop:Include of the part (its XOP infoset is what was
// signed, XOP 1.0 §3.2).
func signedMTOM(t *testing.T, leaf *testpki.Leaf, data []byte) []byte {
	t.Helper()
	b64 := base64.StdEncoding.EncodeToString(data)
	env := `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><m:Put xmlns:m="urn:unit">` + b64 + `</m:Put></s:Body></s:Envelope>`
	o := signer.DefaultOptions()
	o.Signer, o.Certificate = leaf.Key, leaf.Cert
	signed, err := signer.Secure([]byte(env), o)
	require.NoError(t, err)
	root := bytes.Replace(signed, []byte(b64), []byte(`<xop:Include xmlns:xop="http://www.w3.org/2004/08/xop/include" href="cid:data@unit"/>`), 1)
	return mtomTestPackage(root, data)
}

// newMTOMFront is a gateway whose route requires a signature, spooling
// every attachment into spool.
func newMTOMFront(t *testing.T, backend, caFile, spool string) *front {
	t.Helper()
	cfg := config.Default()
	p := config.DefaultPolicy()
	p.Trust.CAFiles = []string{caFile}
	p.Require = []string{config.RequireSignature}
	cfg.Policies = map[string]config.Policy{"partner": p}
	cfg.Routes = []config.Route{{Name: "orders", Path: "/orders", Backend: backend, Policy: "partner"}}
	cfg.MIME.SpoolDir, cfg.MIME.SpoolThreshold = spool, 16
	cfg.Templates.LearnAfter = 1 // a shape's second package hits
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

func spoolEmpty(t *testing.T, dir string) bool {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	return len(entries) == 0
}

// TestMTOMSpoolRemovedOnEveryPath sends signed packages whose attachment
// is spooled and checks that the spool is gone after an accepted request,
// a rejected one and one whose backend is down.
func TestMTOMSpoolRemovedOnEveryPath(t *testing.T) {
	dir := t.TempDir()
	ca := testpki.NewCA(t, "mtom unit CA")
	leaf := ca.Issue(t, dir, "partner")
	caFile := ca.WriteCert(t, dir)
	data := bytes.Repeat([]byte("attachment\x00\xff"), 500)
	var got []byte
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		_, _ = w.Write([]byte("<ok/>"))
	}))
	t.Cleanup(up.Close)
	down := struct{ URL string }{"http://" + testnet.RefusedAddr(t)} // the proxy fails to connect
	signed := func() []byte { return signedMTOM(t, leaf, data) }
	tampered := func() []byte {
		b := signedMTOM(t, leaf, data)
		b[len(b)-len(mtomTestBoundary)-20] ^= 1 // inside the attachment
		return b
	}
	tests := []struct {
		name    string
		backend string
		// body is signed once the gateway runs: its memory replay store
		// refuses messages created before it started (issue 16).
		body   func() []byte
		status int
	}{
		{"ok/accepted", up.URL, signed, http.StatusOK},
		{"fail/tampered attachment", up.URL, tampered, http.StatusInternalServerError},
		{"fail/backend down", down.URL, signed, http.StatusBadGateway},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got = nil
			spool := t.TempDir()
			f := newMTOMFront(t, tt.backend, caFile, spool)
			resp, err := http.Post(f.URL+"/orders", mtomTestType, bytes.NewReader(tt.body()))
			require.NoError(t, err)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			assert.Equal(t, tt.status, resp.StatusCode, string(body))
			if tt.status == http.StatusOK {
				assert.True(t, bytes.Contains(got, data), "the backend did not get the attachment")
				assert.NotContains(t, string(got), "Security>")
			} else {
				assert.Nil(t, got, "the backend got a rejected package")
			}
			assert.Eventually(t, func() bool { return spoolEmpty(t, spool) }, 2*time.Second, 5*time.Millisecond)
		})
	}
}

// TestMTOMReadError checks how a failed mime.Read is answered.
func TestMTOMReadError(t *testing.T) {
	s := &security{metrics: metrics.New(metrics.BuildInfo{}).Policy("p", []string{"unknown", wss.ReasonMalformed.String()}), policy: &wss.Policy{Name: "p"}}
	failing := &countingBody{rc: io.NopCloser(iotestErrReader{})}
	_, _ = failing.Read(make([]byte, 1))
	tests := []struct {
		name   string
		body   io.Reader
		err    error
		status int
	}{
		{"fail/route body limit", strings.NewReader(""), fmt.Errorf("mime: reading: %w", &http.MaxBytesError{Limit: 1}), http.StatusRequestEntityTooLarge},
		{"fail/mime limit", strings.NewReader(""), fmt.Errorf("%w: too many parts", wmime.ErrLimit), http.StatusRequestEntityTooLarge},
		{"fail/malformed", strings.NewReader(""), fmt.Errorf("%w: no boundary", wmime.ErrMalformed), http.StatusInternalServerError},
		{"fail/truncated by the client", failing, fmt.Errorf("%w: reset", wmime.ErrTruncated), http.StatusBadRequest},
		{"fail/truncated cleanly", strings.NewReader(""), fmt.Errorf("%w: EOF", wmime.ErrTruncated), http.StatusInternalServerError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := classify(s.packageError(readError(tt.body, tt.err)))
			assert.Equal(t, tt.status, f.status)
			if tt.status == http.StatusInternalServerError {
				assert.Equal(t, metrics.SecurityRejected, f.outcome, "the uniform security fault")
			}
		})
	}
}

type iotestErrReader struct{}

func (iotestErrReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

// TestMTOMPackageBody checks that Close stops a writer blocked on a reader
// that stopped reading, and removes the spool only after it.
func TestMTOMPackageBody(t *testing.T) {
	spool := t.TempDir()
	data := bytes.Repeat([]byte{0xAB}, 256<<10)
	lim := wmime.DefaultLimits()
	lim.SpoolDir, lim.SpoolThreshold = spool, 1
	pkg, err := wmime.Read(t.Context(), bytes.NewReader(mtomTestPackage([]byte("<r/>"), data)), mtomTestType, lim)
	require.NoError(t, err)
	require.False(t, spoolEmpty(t, spool), "the attachment was not spooled")
	_, w := pkg.Writer([]byte("<r/>"))
	b := newPackageBody(pkg, w)
	_, err = io.ReadFull(b, make([]byte, 1024)) // the writer now blocks on the pipe
	require.NoError(t, err)
	require.NoError(t, b.Close())
	assert.True(t, spoolEmpty(t, spool))
	require.NoError(t, b.Close(), "Close is idempotent")
	_, err = b.Read(make([]byte, 1))
	assert.Error(t, err)
}

// TestMTOMPackageAttachments checks the adapter: an absent part is an
// untyped nil, so the engine's nil checks hold.
func TestMTOMPackageAttachments(t *testing.T) {
	pkg, err := wmime.Read(t.Context(), bytes.NewReader(mtomTestPackage([]byte("<r/>"), []byte("x"))), mtomTestType, wmime.DefaultLimits())
	require.NoError(t, err)
	t.Cleanup(func() { _ = pkg.Close() })
	a := wss.PackageAttachments(pkg, "")
	assert.Equal(t, []string{"data@unit"}, a.IDs())
	att, ok := a.Attachment("absent@unit")
	assert.False(t, ok)
	assert.Nil(t, att)
	att, ok = a.Attachment("data@unit")
	require.True(t, ok)
	assert.Equal(t, int64(1), att.Size())
	require.NoError(t, a.Replace("data@unit", nil, strings.NewReader("plain")))
	att, _ = a.Attachment("data@unit")
	assert.Equal(t, int64(5), att.Size())
	dropConsumed(pkg, []string{"data@unit"})
	assert.Empty(t, a.IDs())
}
