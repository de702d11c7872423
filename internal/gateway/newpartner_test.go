package gateway

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/metrics"
)

// TestNewPartnerIsLearnedBesideFreshShapes (issue 14): a partner whose
// stack is new to the gateway (testtraffic.NewPartner: a shape drawn like
// the fresh-shape flood's, but sent again) is served on the DOM engine,
// learned at its second sight among one-off fresh shapes, and hits from
// its third message on. The bench's fresh-shape scenario sends such
// partners beside the flood and counts what the DOM share sheds of them.
func TestNewPartnerIsLearnedBesideFreshShapes(t *testing.T) {
	f := newFreshBench(t, nil)
	msgs, err := f.g.NewPartner(4)
	require.NoError(t, err)
	fresh := f.messages(t, 4, f.g.Fresh)
	hits := func() float64 {
		return gathered(t, f.m, metrics.NameTemplateLookups, map[string]string{"route": "mix", "result": metrics.LookupHit})
	}
	for i, m := range msgs {
		require.Equal(t, http.StatusOK, f.serve(fresh[i]), "fresh shape %d", i)
		require.Equal(t, http.StatusOK, f.serve(m.Signed), "new partner's message %d", i)
	}
	policy := map[string]string{"policy": "mix"}
	assert.Equal(t, 1.0, gathered(t, f.m, metrics.NameTemplatesLearned, policy), "the partner's shape, not one fresh shape")
	assert.Equal(t, 2.0, hits(), "the partner's third and fourth messages hit")
}
