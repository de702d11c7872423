package e2e

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/testpeer"
)

// TestCXFEncryptedMTOMTemplateHits: a real CXF client with MTOM on signs
// and encrypts its calls (WSS4J storeBytesInAttachment: the
// EncryptedKey's and the Body EncryptedData's CipherValues in MIME parts)
// and wssgw verifies them on the template path after the first one of the
// shape (issue 14): every call is accepted, the backend gets the
// attachment, and the route counts template hits, no not_applicable
// lookups.
func TestCXFEncryptedMTOMTemplateHits(t *testing.T) {
	jar := testpeer.Jar(t, "cxf")
	p := newPartnerPKI(t)
	photo, photoFile, sha := p.photo(t, 64<<10)
	backend := newFilesBackend(t)
	gw := startGateway(t, p.cxfGatewayConfig(backend.URL, t.TempDir()))

	const calls = 6
	var jobs []testpeer.Job
	for k := range calls {
		id := fmt.Sprintf("ok/encrypted-%d", k)
		args := p.cxfCallArgs(gw.data+"/encrypted", "1.1", photoFile, "--actions", "Timestamp Signature Encrypt", "--name", id)
		jobs = append(jobs, testpeer.Job{ID: id, Args: args})
	}
	results := cxfCalls(t, jar, jobs)
	for _, j := range jobs {
		cxfRequire(t, results[j.ID], sha, "Signature", "Timestamp")
		got, forwarded := backend.request(j.ID)
		require.True(t, forwarded, "the backend never saw %s", j.ID)
		data, err := got.data()
		require.NoError(t, err)
		assert.Equal(t, photo, data, "attachment bytes changed on the way")
	}
	fams := scrape(t, gw)
	lookups := func(result string) float64 {
		return value(t, fams, metrics.NameTemplateLookups, map[string]string{"route": "encrypted", "result": result})
	}
	t.Logf("lookups: hit %v, no_template %v, rejected %v, not_applicable %v", lookups(metrics.LookupHit),
		lookups(metrics.LookupNoTemplate), lookups(metrics.LookupRejected), lookups(metrics.LookupNotApplicable))
	assert.Zero(t, lookups(metrics.LookupNotApplicable), "CXF's encrypted MTOM form is a template shape")
	// The CXF client runs two calls at a time: the first two miss, the
	// second of them teaching the template (templates.learnAfter: 2).
	assert.GreaterOrEqual(t, lookups(metrics.LookupHit), float64(calls-2), "hits after the second package of the shape")
}
