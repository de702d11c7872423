package gateway

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/metrics"
)

// TestFreshShapesAreNotLearned: with templates.learnAfter's default, a
// flood of validly signed one-off shapes (testtraffic.Fresh) is verified
// on the DOM engine and learns nothing, while a shape of the realistic mix
// sent twice is learned and its third message hits (issue 14).
func TestFreshShapesAreNotLearned(t *testing.T) {
	f := newFreshBench(t, nil)
	const n = 30
	for _, m := range f.messages(t, n, f.g.Fresh) {
		require.Equal(t, http.StatusOK, f.serve(m))
	}
	policy := map[string]string{"policy": "mix"}
	assert.Zero(t, gathered(t, f.m, metrics.NameTemplatesLearned, policy), "no one-off shape is learned")
	assert.Equal(t, float64(n), gathered(t, f.m, metrics.NameTemplatesSkipped, map[string]string{"policy": "mix", "reason": metrics.SkipFirstSight}))

	hit := f.messages(t, 1, f.g.Next)[0]
	hits := func() float64 {
		return gathered(t, f.m, metrics.NameTemplateLookups, map[string]string{"route": "mix", "result": metrics.LookupHit})
	}
	for range 2 {
		require.Equal(t, http.StatusOK, f.serve(hit))
	}
	assert.Equal(t, 1.0, gathered(t, f.m, metrics.NameTemplatesLearned, policy), "learned at its second sight")
	assert.Zero(t, hits())
	require.Equal(t, http.StatusOK, f.serve(hit))
	assert.Equal(t, 1.0, hits(), "the third message hits")
}
