package gateway

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/metrics"
	wmime "github.com/wssgw/wssgw/internal/mime"
	"github.com/wssgw/wssgw/internal/testvectors"
)

var createdRE = regexp.MustCompile(`Created>([^<]+)<`)

// wss4jMTOMFront is a gateway whose route verifies the WSS4J vectors
// (signature required, decryption with the vectors' server key), its clock
// pinned one second after created.
func wss4jMTOMFront(t *testing.T, backend string, created time.Time, keepHeader bool) *front {
	t.Helper()
	keys := testvectors.Path(t, "wss4j/keys")
	cfg := config.Default()
	p := config.DefaultPolicy()
	p.Trust.CAFiles = []string{filepath.Join(keys, "ca.crt")}
	p.Require = []string{config.RequireSignature}
	p.DecryptionKeys = []config.KeyFiles{{CertFile: filepath.Join(keys, "server.crt"), KeyFile: filepath.Join(keys, "server.key")}}
	p.Replay = "off"
	p.KeepSecurityHeader = keepHeader
	cfg.Templates.LearnAfter = 1 // a shape's second package hits
	cfg.Policies = map[string]config.Policy{"partner": p}
	cfg.Routes = []config.Route{{Name: "orders", Path: "/orders", Backend: backend, Policy: "partner"}}
	cfg.MIME.SpoolDir, cfg.MIME.SpoolThreshold = t.TempDir(), 16
	cfg.ApplyDefaults()
	require.NoError(t, cfg.Validate())
	m := metrics.New(metrics.BuildInfo{Version: "test"})
	gw, err := New(&cfg, m, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	t.Cleanup(gw.Close)
	gw.routes.match("/orders").security.now = func() time.Time { return created.Add(time.Second) }
	f := &front{Server: httptest.NewServer(gw), metrics: m}
	t.Cleanup(f.Close)
	return f
}

// wss4jPackage is one WSS4J-made MTOM package of a vector set, as sent
// (raw, its Content-Type) and as read (closed when the test ends), with
// its Timestamp's Created.
type wss4jPackage struct {
	raw     []byte
	ctype   string
	in      *wmime.Package
	created time.Time
}

func readWSS4JPackage(t *testing.T, set, name string) wss4jPackage {
	t.Helper()
	base := testvectors.Path(t, "wss4j/"+set+"/"+name+".mime")
	raw, err := os.ReadFile(base)
	require.NoError(t, err)
	ctype, err := os.ReadFile(strings.TrimSuffix(base, ".mime") + ".ctype")
	require.NoError(t, err)
	pkg := wss4jPackage{raw: raw, ctype: strings.TrimSpace(string(ctype))}
	pkg.in, err = wmime.Read(context.Background(), bytes.NewReader(raw), pkg.ctype, wmime.DefaultLimits())
	require.NoError(t, err)
	t.Cleanup(func() { _ = pkg.in.Close() })
	pkg.created, err = time.Parse(time.RFC3339Nano, string(createdRE.FindSubmatch(pkg.in.RootBytes)[1]))
	require.NoError(t, err)
	return pkg
}

// wss4jMTOMRoute is wss4jMTOMFront in front of a backend that records
// every request it gets (body and Content-Type, in order).
type wss4jMTOMRoute struct {
	*front
	got     [][]byte
	gotType []string
}

func newWSS4JMTOMRoute(t *testing.T, created time.Time, keepHeader bool) *wss4jMTOMRoute {
	t.Helper()
	r := &wss4jMTOMRoute{}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.got, r.gotType = append(r.got, b), append(r.gotType, req.Header.Get("Content-Type"))
		_, _ = w.Write([]byte("<ok/>"))
	}))
	t.Cleanup(up.Close)
	r.front = wss4jMTOMFront(t, up.URL, created, keepHeader)
	return r
}

// post sends a package to the route and returns the status and body.
func (r *wss4jMTOMRoute) post(t *testing.T, raw []byte, ctype string) (int, string) {
	t.Helper()
	resp, err := http.Post(r.URL+"/orders", ctype, bytes.NewReader(raw))
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// status is post's status alone.
func (r *wss4jMTOMRoute) status(t *testing.T, raw []byte, ctype string) int {
	t.Helper()
	code, _ := r.post(t, raw, ctype)
	return code
}

// lookups is the route's template lookup count with that result.
func (r *wss4jMTOMRoute) lookups(t *testing.T, result string) float64 {
	t.Helper()
	return gathered(t, r.metrics, metrics.NameTemplateLookups, map[string]string{"route": "orders", "result": result})
}

// forwarded reads the i-th package the backend got.
func (r *wss4jMTOMRoute) forwarded(t *testing.T, i int) *wmime.Package {
	t.Helper()
	require.Greater(t, len(r.got), i, "the backend got no package %d", i)
	out, err := wmime.Read(context.Background(), bytes.NewReader(r.got[i]), r.gotType[i], wmime.DefaultLimits())
	require.NoError(t, err)
	t.Cleanup(func() { _ = out.Close() })
	return out
}

// TestWSS4JStoreBytesForwarded sends CXF's MTOM form (WSS4J
// storeBytesInAttachment: the BST certificate and the CipherValues in MIME
// parts, issue 15) through the gateway: the backend gets the plaintext
// root and the Body's attachment byte for byte, and none of the parts
// that held Security header values; a tampered attachment or certificate
// part never reaches it.
func TestWSS4JStoreBytesForwarded(t *testing.T) {
	for _, set := range []string{"mtom-store-sign", "mtom-store-sign-soap12", "mtom-store-signencr", "mtom-store-signencr-soap12"} {
		for _, tamper := range []string{"", "keep-header", "photo", "certificate"} {
			name := "ok/" + set
			switch tamper {
			case "keep-header":
				name = "ok/keepSecurityHeader/" + set
			case "photo", "certificate":
				name = "fail/tampered " + tamper + "/" + set
			}
			keep := tamper == "keep-header"
			t.Run(name, func(t *testing.T) {
				pkg := readWSS4JPackage(t, set, "0000")
				raw, in := pkg.raw, pkg.in
				photo := partBytes(t, in, "photo0@example.org")
				switch tamper {
				case "photo":
					raw = flipIn(t, raw, photo)
				case "certificate":
					cert := regexp.MustCompile(`BinarySecurityToken [^>]*><xop:Include href="cid:([^"]+)"`).FindSubmatch(in.RootBytes)
					require.NotNil(t, cert)
					raw = flipIn(t, raw, partBytes(t, in, string(cert[1])))
				}
				r := newWSS4JMTOMRoute(t, pkg.created, keep)
				code, body := r.post(t, raw, pkg.ctype)
				if tamper == "photo" || tamper == "certificate" {
					assert.Equal(t, http.StatusInternalServerError, code, body)
					assert.Empty(t, r.got, "the backend got a rejected package")
					return
				}
				require.Equal(t, http.StatusOK, code, body)
				out := r.forwarded(t, 0)
				assert.Equal(t, photo, partBytes(t, out, "photo0@example.org"), "attachment byte-exact")
				root := string(out.RootBytes)
				// Every xop:Include of the forwarded root names a forwarded
				// part, and nothing else goes on (XOP 1.0 §3).
				hrefs := map[string]bool{}
				for _, m := range regexp.MustCompile(`href="cid:([^"]+)"`).FindAllStringSubmatch(root, -1) {
					hrefs[m[1]] = true
				}
				forwarded := map[string]bool{}
				for _, a := range out.Attachments {
					forwarded[a.ContentID()] = true
					src, ok := in.Attachment(a.ContentID())
					require.True(t, ok)
					assert.Equal(t, partBytes(t, out, a.ContentID()), readPart(t, src), "part <%s> byte-exact", a.ContentID())
				}
				assert.Equal(t, hrefs, forwarded)
				assert.NotContains(t, root, "EncryptedData")
				if keep {
					assert.Contains(t, root, "BinarySecurityToken", "the header goes on")
					assert.Greater(t, len(out.Attachments), 1, "with the parts it names")
					return
				}
				require.Len(t, out.Attachments, 1, "only the Body's attachment goes on")
				assert.NotContains(t, root, "Security")
				assert.Contains(t, root, `href="cid:photo0@example.org"`)
				assert.Contains(t, root, "placeOrder")
			})
		}
	}
}

func partBytes(t *testing.T, pkg *wmime.Package, cid string) []byte {
	t.Helper()
	p, ok := pkg.Attachment(cid)
	require.True(t, ok, "no part <%s>", cid)
	return readPart(t, p)
}

func readPart(t *testing.T, p *wmime.Part) []byte {
	t.Helper()
	r, err := p.Open()
	require.NoError(t, err)
	defer r.Close()
	b, err := io.ReadAll(r)
	require.NoError(t, err)
	return b
}

// flipIn flips one bit near the end of part content inside the raw package.
func flipIn(t *testing.T, raw, content []byte) []byte {
	t.Helper()
	i := bytes.Index(raw, content)
	require.GreaterOrEqual(t, i, 0, "part content not found")
	out := append([]byte(nil), raw...)
	out[i+len(content)-10] ^= 1
	require.False(t, bytes.Equal(out, raw))
	return out
}

// TestWSS4JMTOMTemplateHits: CXF's MTOM form is on the template path from
// the second package of a shape on (issue 14): accepted, the Body's
// attachment forwarded byte for byte and the certificate's part dropped;
// a tampered attachment on a hit is refused like the DOM engine refuses
// it, and never reaches the backend.
func TestWSS4JMTOMTemplateHits(t *testing.T) {
	for _, set := range []string{"mtom-store-sign", "mtom-store-sign-soap12"} {
		t.Run("ok/"+set, func(t *testing.T) {
			p0, p1 := readWSS4JPackage(t, set, "0000"), readWSS4JPackage(t, set, "0001")
			r := newWSS4JMTOMRoute(t, p1.created, false)
			require.Equal(t, http.StatusOK, r.status(t, p0.raw, p0.ctype))
			assert.Equal(t, 1.0, r.lookups(t, metrics.LookupNoTemplate))
			require.Equal(t, http.StatusOK, r.status(t, p1.raw, p1.ctype))
			assert.Equal(t, 1.0, r.lookups(t, metrics.LookupHit), "the second package hits")
			for range 8 {
				// Past the DOM-shadowed first hits of a generic Body
				// (template.genericShadowHits): the refusal below is the
				// template path's own.
				require.Equal(t, http.StatusOK, r.status(t, p1.raw, p1.ctype))
			}
			require.Len(t, r.got, 10)
			out := r.forwarded(t, 1)
			require.Len(t, out.Attachments, 1, "only the Body's attachment goes on")
			assert.Equal(t, partBytes(t, p1.in, "photo1@example.org"), partBytes(t, out, "photo1@example.org"), "attachment byte-exact")
			assert.NotContains(t, string(out.RootBytes), "Security")

			require.Equal(t, http.StatusInternalServerError, r.status(t, flipIn(t, p1.raw, partBytes(t, p1.in, "photo1@example.org")), p1.ctype))
			assert.Equal(t, 10.0, r.lookups(t, metrics.LookupHit), "refused on the template path")
			assert.Len(t, r.got, 10, "the backend got a rejected package")
		})
	}
}
