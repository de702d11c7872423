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

// TestRateLimitTables: the tracked and forgotten identities come from the
// latest source only (a reload replaces it), and none without a source.
func TestRateLimitTables(t *testing.T) {
	m := New(BuildInfo{})
	names := []string{NameRateLimitTracked, NameRateLimitForgotten}
	require.NoError(t, testutil.GatherAndCompare(m.Registry(), strings.NewReader(""), names...))
	m.WatchRateLimits(func(yield func(string, string, int, uint64)) { yield("old", ScopeClient, 1, 1) })
	m.WatchRateLimits(func(yield func(string, string, int, uint64)) {
		yield("orders", ScopeClient, 10000, 42)
		yield("orders", ScopeSigner, 3, 0)
	})
	want := `# HELP wssgw_ratelimit_forgotten_identities_total Clients and signers the limits forgot to make room for new ones (least recently seen first), by route and scope.
# TYPE wssgw_ratelimit_forgotten_identities_total counter
wssgw_ratelimit_forgotten_identities_total{route="orders",scope="client"} 42
wssgw_ratelimit_forgotten_identities_total{route="orders",scope="signer"} 0
# HELP wssgw_ratelimit_tracked_identities Clients and signers the rate and concurrency limits remember, by route and scope (client, signer); at most clients.maxTracked each.
# TYPE wssgw_ratelimit_tracked_identities gauge
wssgw_ratelimit_tracked_identities{route="orders",scope="client"} 10000
wssgw_ratelimit_tracked_identities{route="orders",scope="signer"} 3
`
	require.NoError(t, testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), names...))
}
