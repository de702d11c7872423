package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
)

// TestRateLimitRejections: every scope of a route exists at zero before
// the first refusal, so rate() and the alert work from start-up; a refusal
// counts in its scope only, and an unknown scope counts nowhere.
func TestRateLimitRejections(t *testing.T) {
	m := New(BuildInfo{})
	rl := m.RateLimits("orders")
	rl.Rejected(ScopeClient)
	rl.Rejected(ScopeClient)
	rl.Rejected("bogus")
	want := `# HELP wssgw_ratelimit_rejections_total Requests refused with 429 by a rate or concurrency limit, by route and scope (route, client, signer).
# TYPE wssgw_ratelimit_rejections_total counter
wssgw_ratelimit_rejections_total{route="orders",scope="client"} 2
wssgw_ratelimit_rejections_total{route="orders",scope="route"} 0
wssgw_ratelimit_rejections_total{route="orders",scope="signer"} 0
`
	require.NoError(t, testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), NameRateLimitRejections))
}
