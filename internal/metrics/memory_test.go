package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/budget"
)

// TestOverloadRejections: every reason of a route exists at zero from
// start-up, first_sight included (issue 14), so rate() and the alert work
// before the first refusal; a refusal counts in its reason, an unknown one
// as memory.
func TestOverloadRejections(t *testing.T) {
	m := New(BuildInfo{})
	m.WatchOverload("orders")
	m.Overloaded("orders", OverloadFirstSight)
	m.Overloaded("orders", OverloadFirstSight)
	m.Overloaded("orders", "bogus")
	want := `# HELP wssgw_overload_rejections_total Requests refused with 503 and Retry-After by the memory budget, by route and reason.
# TYPE wssgw_overload_rejections_total counter
wssgw_overload_rejections_total{reason="dom_queue",route="orders"} 0
wssgw_overload_rejections_total{reason="dom_share",route="orders"} 0
wssgw_overload_rejections_total{reason="first_sight",route="orders"} 2
wssgw_overload_rejections_total{reason="memory",route="orders"} 1
`
	require.NoError(t, testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), NameOverloadRejections))
}

// TestOverloadReasonsAreTheBudgets: the label values are the budget's
// reasons, which the gateway passes through unchanged.
func TestOverloadReasonsAreTheBudgets(t *testing.T) {
	assert.Equal(t, []string{budget.ReasonMemory, budget.ReasonQueue, budget.ReasonShare, budget.ReasonFirstSight}, OverloadReasons())
}
