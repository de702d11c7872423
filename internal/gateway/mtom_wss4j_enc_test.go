package gateway

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/metrics"
	wmime "github.com/wssgw/wssgw/internal/mime"
	"github.com/wssgw/wssgw/internal/testvectors"
)

// cipherIncludeRE finds the Content-IDs of the parts that hold
// CipherValues (WSS4J storeBytesInAttachment): the EncryptedKey's, then
// the Body EncryptedData's.
var cipherIncludeRE = regexp.MustCompile(`CipherValue[^>]*><xop:Include [^>]*href="cid:([^"]+)"`)

// TestWSS4JEncryptedMTOMTemplateHits: CXF's sign+encrypt MTOM form (the
// CipherValues of the EncryptedKey and of the Body's EncryptedData in
// MIME parts, spooled to disk here) is on the template path from the
// second package on (issue 14): accepted, the plaintext root and the
// Body's attachment forwarded, none of the parts that held ciphertext or
// the certificate; a tampered ciphertext part is refused on the template
// path and never reaches the backend.
func TestWSS4JEncryptedMTOMTemplateHits(t *testing.T) {
	for _, set := range []string{"mtom-store-signencr", "mtom-store-signencr-soap12"} {
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
			cv := cipherIncludeRE.FindAllSubmatch(in1.RootBytes, -1)
			require.Len(t, cv, 2, "the EncryptedKey's and the EncryptedData's CipherValue in parts")
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
			assert.Zero(t, lookups(metrics.LookupNotApplicable))
			require.Len(t, got, 2)
			out, err := wmime.Read(context.Background(), bytes.NewReader(got[1]), gotType[1], wmime.DefaultLimits())
			require.NoError(t, err)
			defer out.Close()
			require.Len(t, out.Attachments, 1, "only the Body's attachment goes on")
			assert.Equal(t, partBytes(t, in1, "photo1@example.org"), partBytes(t, out, "photo1@example.org"), "attachment byte-exact")
			assert.NotContains(t, string(out.RootBytes), "Security")
			assert.NotContains(t, string(out.RootBytes), "EncryptedData")
			assert.Contains(t, string(out.RootBytes), "cid:photo1@example.org", "the plaintext Body's include goes on")

			ct := partBytes(t, in1, string(cv[1][1]))
			require.Equal(t, http.StatusInternalServerError, post(flipIn(t, raw1, ct), ctype1))
			assert.Equal(t, 2.0, lookups(metrics.LookupHit), "refused on the template path")
			assert.Len(t, got, 2, "the backend got a rejected package")

			// A ciphertext part sent base64 (Content-Transfer-Encoding) is
			// refused when the package is read, before either engine
			// (mime.Read admits binary, 8bit and 7bit, as XOP 1.0 §5 and
			// MTOM send): both engines only ever read the same octets.
			at := bytes.Index(raw1, []byte("Content-ID: <"+string(cv[1][1])+">"))
			require.Positive(t, at)
			cte := bytes.LastIndex(raw1[:at], []byte("Content-Transfer-Encoding: binary"))
			require.Positive(t, cte)
			b64 := bytes.Clone(raw1)
			copy(b64[cte+len("Content-Transfer-Encoding: "):], "base64")
			assert.NotEqual(t, http.StatusOK, post(b64, ctype1))
			assert.Equal(t, 3.0, lookups(metrics.LookupHit)+lookups(metrics.LookupRejected)+lookups(metrics.LookupNoTemplate), "no engine ran")
			assert.Len(t, got, 2)
		})
	}
}
