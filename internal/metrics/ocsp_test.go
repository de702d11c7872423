package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/wssgw/wssgw/internal/trust"
)

func TestOCSP(t *testing.T) {
	m := New(BuildInfo{Version: "v1", Revision: "abc"})
	assert.Equal(t, 0, testutil.CollectAndCount(m.ocspFetches), "no OCSP policy, no series")
	fetched := m.WatchOCSP("partner", func() (map[string]int, float64) {
		return map[string]int{OCSPGood: 2, OCSPStale: 1}, 42
	})
	fetched(OCSPGood)
	fetched(OCSPError)
	fetched("bogus")
	assert.Equal(t, 1.0, testutil.ToFloat64(m.ocspFetches.WithLabelValues("partner", OCSPGood)))
	assert.Equal(t, len(OCSPFetchResults()), testutil.CollectAndCount(m.ocspFetches), "bogus is not a series")
	want := `
# HELP wssgw_ocsp_oldest_response_age_seconds Age (now minus ThisUpdate) of the oldest OCSP response held, by policy; 0 when none is held.
# TYPE wssgw_ocsp_oldest_response_age_seconds gauge
wssgw_ocsp_oldest_response_age_seconds{policy="partner"} 42
`
	require.NoError(t, testutil.CollectAndCompare(m.ocspCache, strings.NewReader(want), NameOCSPOldestResponse))
	assert.Equal(t, len(OCSPStatuses())+1, testutil.CollectAndCount(m.ocspCache), "every status at zero, and the age")
	problems, err := testutil.GatherAndLint(m.Registry())
	require.NoError(t, err)
	assert.Empty(t, problems)
}

// TestOCSPLabelsMatchCrypto: the label values are the strings the crypto
// package reports (metrics keeps its own copy so that it imports nothing).
func TestOCSPLabelsMatchCrypto(t *testing.T) {
	assert.Equal(t, []string{trust.OCSPGood, trust.OCSPRevoked, trust.OCSPUnknown, trust.OCSPError}, OCSPFetchResults())
	assert.Equal(t, []string{trust.OCSPGood, trust.OCSPRevoked, trust.OCSPUnknown, trust.OCSPStale, trust.OCSPMissing}, OCSPStatuses())
}
