package gateway

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/metrics"
)

// stripCount reads wssgw_unsigned_stripped_total for the policy and kind.
func (f *front) stripCount(t *testing.T, kind string) float64 {
	t.Helper()
	fams, err := f.metrics.Registry().Gather()
	require.NoError(t, err)
	for _, fam := range fams {
		if fam.GetName() != metrics.NameUnsignedStripped {
			continue
		}
		for _, m := range fam.Metric {
			labels := map[string]string{}
			for _, l := range m.Label {
				labels[l.GetName()] = l.GetValue()
			}
			if labels[metrics.LabelPolicy] == "partner" && labels[metrics.LabelKind] == kind {
				return m.Counter.GetValue()
			}
		}
	}
	return 0
}

// TestUnsignedContentReachesNoBackend: a signed request into which an
// unsigned header block and Envelope/Header attributes were injected, per
// unsignedHeaders mode (issue 13 item 8).
func TestUnsignedContentReachesNoBackend(t *testing.T) {
	k := newSigningPKI(t)
	tests := map[string]struct {
		mode     string
		status   int
		received func(t *testing.T, body string)
		headers  float64 // wssgw_unsigned_stripped_total{kind="header"}
		attrs    float64
	}{
		"ok/strip": {mode: config.UnsignedStrip, status: http.StatusOK, headers: 1, attrs: 2, received: func(t *testing.T, body string) {
			assert.NotContains(t, body, "Admin")
			assert.NotContains(t, body, "y:role")
			assert.NotContains(t, body, "<!--")
		}},
		"ok/forward": {mode: config.UnsignedForward, status: http.StatusOK, received: func(t *testing.T, body string) {
			assert.Contains(t, body, `<x:Admin xmlns:x="urn:x">true</x:Admin>`)
			assert.Equal(t, 2, strings.Count(body, `y:role="admin"`))
			assert.NotContains(t, body, "<!--", "comments never pass")
		}},
		"fail/reject": {mode: config.UnsignedReject, status: http.StatusInternalServerError},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			backend := newRecorder(t)
			f := newSigningFrontConfig(t, backend.URL, k, func(r *config.Responses) { *r = config.DefaultResponses() }, func(c *config.Config) {
				p := c.Policies["partner"]
				p.UnsignedHeaders = tc.mode
				c.Policies["partner"] = p
			})
			msg := string(signedRequest(t, k))
			msg = strings.Replace(msg, `<soapenv:Envelope `, `<soapenv:Envelope xmlns:y="urn:y" y:role="admin" `, 1)
			msg = strings.Replace(msg, `<soapenv:Header>`, `<soapenv:Header y:role="admin">`, 1)
			msg = strings.Replace(msg, `</soapenv:Header>`, `<x:Admin xmlns:x="urn:x">tr<!--c-->ue</x:Admin></soapenv:Header>`, 1)
			require.Contains(t, msg, "x:Admin")
			resp := post(t, f.URL, []byte(msg))
			assert.Equal(t, tc.status, resp.StatusCode)
			got := backend.bodies()
			if tc.received == nil {
				assert.Empty(t, got, "nothing reaches the backend")
				body, _ := io.ReadAll(resp.Body)
				assert.Contains(t, string(body), "InvalidSecurity", "the uniform fault")
				return
			}
			require.Len(t, got, 1)
			tc.received(t, got[0])
			assert.Contains(t, got[0], "GetFiles", "the signed Body is forwarded")
			assert.Equal(t, tc.headers, f.stripCount(t, "header"))
			assert.Equal(t, tc.attrs, f.stripCount(t, "attribute"))
		})
	}
}
