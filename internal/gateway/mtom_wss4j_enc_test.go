package gateway

import (
	"bytes"
	"net/http"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/metrics"
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
			p0, p1 := readWSS4JPackage(t, set, "0000"), readWSS4JPackage(t, set, "0001")
			cv := cipherIncludeRE.FindAllSubmatch(p1.in.RootBytes, -1)
			require.Len(t, cv, 2, "the EncryptedKey's and the EncryptedData's CipherValue in parts")
			r := newWSS4JMTOMRoute(t, p1.created, false)
			require.Equal(t, http.StatusOK, r.status(t, p0.raw, p0.ctype))
			assert.Equal(t, 1.0, r.lookups(t, metrics.LookupNoTemplate))
			require.Equal(t, http.StatusOK, r.status(t, p1.raw, p1.ctype))
			assert.Equal(t, 1.0, r.lookups(t, metrics.LookupHit), "the second package hits")
			assert.Zero(t, r.lookups(t, metrics.LookupNotApplicable))
			require.Len(t, r.got, 2)
			out := r.forwarded(t, 1)
			require.Len(t, out.Attachments, 1, "only the Body's attachment goes on")
			assert.Equal(t, partBytes(t, p1.in, "photo1@example.org"), partBytes(t, out, "photo1@example.org"), "attachment byte-exact")
			assert.NotContains(t, string(out.RootBytes), "Security")
			assert.NotContains(t, string(out.RootBytes), "EncryptedData")
			assert.Contains(t, string(out.RootBytes), "cid:photo1@example.org", "the plaintext Body's include goes on")

			ct := partBytes(t, p1.in, string(cv[1][1]))
			require.Equal(t, http.StatusInternalServerError, r.status(t, flipIn(t, p1.raw, ct), p1.ctype))
			assert.Equal(t, 2.0, r.lookups(t, metrics.LookupHit), "refused on the template path")
			assert.Len(t, r.got, 2, "the backend got a rejected package")

			// A ciphertext part sent base64 (Content-Transfer-Encoding) is
			// refused when the package is read, before either engine
			// (mime.Read admits binary, 8bit and 7bit, as XOP 1.0 §5 and
			// MTOM send): both engines only ever read the same octets.
			at := bytes.Index(p1.raw, []byte("Content-ID: <"+string(cv[1][1])+">"))
			require.Positive(t, at)
			cte := bytes.LastIndex(p1.raw[:at], []byte("Content-Transfer-Encoding: binary"))
			require.Positive(t, cte)
			b64 := bytes.Clone(p1.raw)
			copy(b64[cte+len("Content-Transfer-Encoding: "):], "base64")
			assert.NotEqual(t, http.StatusOK, r.status(t, b64, p1.ctype))
			assert.Equal(t, 3.0, r.lookups(t, metrics.LookupHit)+r.lookups(t, metrics.LookupRejected)+r.lookups(t, metrics.LookupNoTemplate), "no engine ran")
			assert.Len(t, r.got, 2)
		})
	}
}
