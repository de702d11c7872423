package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestResponseSigning: a signing route's series exist at zero, results
// count, a value outside the closed set is not a new series, and routes
// that never asked for handles have none.
func TestResponseSigning(t *testing.T) {
	m := New(BuildInfo{Version: "v1", Revision: "abc"})
	assert.Equal(t, 0, testutil.CollectAndCount(m.responses), "no signing route, no series")
	rm := m.Responses("orders")
	rm.Result(ResponseSigned)
	rm.Result(ResponseBackendError)
	rm.Result(ResponseBackendError)
	rm.Result("bogus")
	m.Responses("orders").Result(ResponseSigned) // again, as after a reload: the same series
	for _, tc := range []struct {
		result string
		want   float64
	}{
		{ResponseSigned, 2}, {ResponseBackendError, 2}, {ResponseFailed, 0}, {ResponseAborted, 0}, {ResponsePassed, 0},
	} {
		assert.Equal(t, tc.want, testutil.ToFloat64(m.responses.WithLabelValues("orders", tc.result)), tc.result)
	}
	assert.Equal(t, len(ResponseResults()), testutil.CollectAndCount(m.responses), "bogus is not a series")
	problems, err := testutil.GatherAndLint(m.Registry())
	require.NoError(t, err)
	assert.Empty(t, problems)
}

// TestResponseResultsDocumented: every result value is explained in the
// Help text, which is where an operator reads what it means.
func TestResponseResultsDocumented(t *testing.T) {
	help := newResponseSigning().WithLabelValues("r", ResponseSigned).Desc().String()
	for _, r := range ResponseResults() {
		assert.True(t, strings.Contains(help, r+" (") || strings.Contains(help, r+";"), "Help does not explain %q: %s", r, help)
	}
}
