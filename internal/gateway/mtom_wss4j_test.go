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
				base := testvectors.Path(t, "wss4j/"+set+"/0000.mime")
				raw, err := os.ReadFile(base)
				require.NoError(t, err)
				ctypeB, err := os.ReadFile(strings.TrimSuffix(base, ".mime") + ".ctype")
				require.NoError(t, err)
				ctype := strings.TrimSpace(string(ctypeB))
				in, err := wmime.Read(context.Background(), bytes.NewReader(raw), ctype, wmime.DefaultLimits())
				require.NoError(t, err)
				defer in.Close()
				created, err := time.Parse(time.RFC3339Nano, string(createdRE.FindSubmatch(in.RootBytes)[1]))
				require.NoError(t, err)
				photo := partBytes(t, in, "photo0@example.org")
				switch tamper {
				case "photo":
					raw = flipIn(t, raw, photo)
				case "certificate":
					cert := regexp.MustCompile(`BinarySecurityToken [^>]*><xop:Include href="cid:([^"]+)"`).FindSubmatch(in.RootBytes)
					require.NotNil(t, cert)
					raw = flipIn(t, raw, partBytes(t, in, string(cert[1])))
				}
				var got []byte
				var gotType string
				up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					got, _ = io.ReadAll(r.Body)
					gotType = r.Header.Get("Content-Type")
					_, _ = w.Write([]byte("<ok/>"))
				}))
				t.Cleanup(up.Close)
				f := wss4jMTOMFront(t, up.URL, created, keep)
				resp, err := http.Post(f.URL+"/orders", ctype, bytes.NewReader(raw))
				require.NoError(t, err)
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if tamper == "photo" || tamper == "certificate" {
					assert.Equal(t, http.StatusInternalServerError, resp.StatusCode, string(body))
					assert.Nil(t, got, "the backend got a rejected package")
					return
				}
				require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
				out, err := wmime.Read(context.Background(), bytes.NewReader(got), gotType, wmime.DefaultLimits())
				require.NoError(t, err)
				defer out.Close()
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
			read := func(name string) ([]byte, string, *wmime.Package, time.Time) {
				base := testvectors.Path(t, "wss4j/"+set+"/"+name+".mime")
				raw, err := os.ReadFile(base)
				require.NoError(t, err)
				ctypeB, err := os.ReadFile(strings.TrimSuffix(base, ".mime") + ".ctype")
				require.NoError(t, err)
				ctype := strings.TrimSpace(string(ctypeB))
				in, err := wmime.Read(context.Background(), bytes.NewReader(raw), ctype, wmime.DefaultLimits())
				require.NoError(t, err)
				t.Cleanup(func() { _ = in.Close() })
				created, err := time.Parse(time.RFC3339Nano, string(createdRE.FindSubmatch(in.RootBytes)[1]))
				require.NoError(t, err)
				return raw, ctype, in, created
			}
			raw0, ctype0, _, _ := read("0000")
			raw1, ctype1, in1, created1 := read("0001")
			var got [][]byte
			var gotType []string
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				got, gotType = append(got, b), append(gotType, r.Header.Get("Content-Type"))
				_, _ = w.Write([]byte("<ok/>"))
			}))
			t.Cleanup(up.Close)
			f := wss4jMTOMFront(t, up.URL, created1, false)
			lookups := func(result string) float64 {
				return gathered(t, f.metrics, metrics.NameTemplateLookups, map[string]string{"route": "orders", "result": result})
			}
			post := func(raw []byte, ctype string) int {
				resp, err := http.Post(f.URL+"/orders", ctype, bytes.NewReader(raw))
				require.NoError(t, err)
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				return resp.StatusCode
			}
			require.Equal(t, http.StatusOK, post(raw0, ctype0))
			assert.Equal(t, 1.0, lookups(metrics.LookupNoTemplate))
			require.Equal(t, http.StatusOK, post(raw1, ctype1))
			assert.Equal(t, 1.0, lookups(metrics.LookupHit), "the second package hits")
			for range 8 {
				// Past the DOM-shadowed first hits of a generic Body
				// (template.genericShadowHits): the refusal below is the
				// template path's own.
				require.Equal(t, http.StatusOK, post(raw1, ctype1))
			}
			require.Len(t, got, 10)
			out, err := wmime.Read(context.Background(), bytes.NewReader(got[1]), gotType[1], wmime.DefaultLimits())
			require.NoError(t, err)
			defer out.Close()
			require.Len(t, out.Attachments, 1, "only the Body's attachment goes on")
			assert.Equal(t, partBytes(t, in1, "photo1@example.org"), partBytes(t, out, "photo1@example.org"), "attachment byte-exact")
			assert.NotContains(t, string(out.RootBytes), "Security")

			require.Equal(t, http.StatusInternalServerError, post(flipIn(t, raw1, partBytes(t, in1, "photo1@example.org")), ctype1))
			assert.Equal(t, 10.0, lookups(metrics.LookupHit), "refused on the template path")
			assert.Len(t, got, 10, "the backend got a rejected package")
		})
	}
}
