package template

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// TestEnvelopeContentNeverASlot: what sits directly in the Envelope and the
// Header is never a slot (issue 13 item 7). A template learned from a
// message with white space there holds that white space as a literal, so
// text, a reference, a comment or CDATA in its place misses the template
// and the DOM engine's gate refuses it: no engine forwards it.
func TestEnvelopeContentNeverASlot(t *testing.T) {
	f := newFixture(t, nil, testOptions())
	// White space at every place the attacks below fill, so that the
	// learned template has a (white-space) literal there.
	spaced := func(msg []byte, fill string) []byte {
		s := string(msg)
		for _, at := range []string{"<soap:Header>", "</wsse:Security>", "</soap:Header>", "</soap:Body>"} {
			i := strings.Index(s, at)
			require.GreaterOrEqual(t, i, 0, at)
			s = s[:i+len(at)] + "\n" + fill + "\n" + s[i+len(at):]
		}
		return []byte(s)
	}
	learn := spaced(f.sign(t, envelope(false, 2, "learn"), f.rsa, signer.RefBST, f.now, nil), "")
	_, err := f.engine.Process(learn, f.policy, f.now)
	require.NoError(t, err)
	res, err := f.engine.Process(spaced(f.sign(t, envelope(false, 2, "hit"), f.rsa, signer.RefBST, f.now, nil), ""), f.policy, f.now)
	require.NoError(t, err)
	require.Equal(t, metrics.LookupHit, res.Lookup, "the learned shape is on the template path")

	for _, fill := range []string{"x", "&#65;", "&#32;", "<!-- c -->", "<![CDATA[<soap:Body/>]]>"} {
		t.Run("fail/"+fill, func(t *testing.T) {
			msg := spaced(f.sign(t, envelope(false, 2, "attack"), f.rsa, signer.RefBST, f.now, nil), fill)
			res, err := f.engine.Process(msg, f.policy, f.now)
			require.Error(t, err)
			assert.ErrorIs(t, err, xmlscan.KindElementOnly, "the DOM engine's gate refuses it")
			if res != nil {
				assert.NotEqual(t, metrics.LookupHit, res.Lookup, "the template path never accepts it")
			}
		})
	}
}
