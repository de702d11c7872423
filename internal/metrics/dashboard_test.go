package metrics

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLegacySignersBounded: past MaxLegacySigners distinct subjects a
// policy's further signers share "other"; known ones keep their series,
// also through a new PolicyMetrics (a reload).
func TestLegacySignersBounded(t *testing.T) {
	m := New(BuildInfo{})
	pm := m.Policy("p", nil)
	pm.InitLegacy("sha1")
	assert.Equal(t, 1, testutil.CollectAndCount(m.legacy), "the none series exists at zero")
	for i := range MaxLegacySigners + 5 {
		pm.Legacy("sha1", fmt.Sprintf("CN=partner %d", i))
	}
	pm = m.Policy("p", nil) // a reload
	pm.Legacy("sha1", "CN=partner 0")
	pm.Legacy("sha1", "CN=new partner")
	pm.Legacy("sha1", "")
	assert.Equal(t, 2.0, testutil.ToFloat64(m.legacy.WithLabelValues("p", "sha1", "CN=partner 0")))
	assert.Equal(t, 6.0, testutil.ToFloat64(m.legacy.WithLabelValues("p", "sha1", SignerOther)))
	assert.Equal(t, 1.0, testutil.ToFloat64(m.legacy.WithLabelValues("p", "sha1", SignerNone)))
	assert.Equal(t, MaxLegacySigners+2, testutil.CollectAndCount(m.legacy), "subjects + none + other")
	// Another policy has its own bound.
	m.Policy("q", nil).Legacy("sha1", "CN=partner 999")
	assert.Equal(t, 1.0, testutil.ToFloat64(m.legacy.WithLabelValues("q", "sha1", "CN=partner 999")))
}

func TestReplayStoreMetrics(t *testing.T) {
	m := New(BuildInfo{})
	assert.Equal(t, 0, testutil.CollectAndCount(m.replay), "no store, no series")
	entries := 3
	rm := m.ReplayStore(ReplayMemory, func() (int, int) { return entries, 10 })
	// 3 results + 1 histogram + entries + capacity
	assert.Equal(t, 6, testutil.CollectAndCount(m.replay))
	rm.Seen(time.Millisecond, false, nil)
	rm.Seen(time.Millisecond, true, nil)
	rm.Seen(time.Millisecond, true, errors.New("down"))
	for _, r := range ReplayResults() {
		assert.Equal(t, 1.0, testutil.ToFloat64(m.replay.ops.WithLabelValues(ReplayMemory, r)), r)
	}
	entries = 7
	want := `# HELP wssgw_replay_store_entries Keys the memory replay store holds now (expired ones not yet swept included), by store.
# TYPE wssgw_replay_store_entries gauge
wssgw_replay_store_entries{store="memory"} 7
`
	require.NoError(t, testutil.CollectAndCompare(m.replay, strings.NewReader(want), NameReplayEntries))
	// Redis: operations only; a second call replaces the size source.
	m.ReplayStore(ReplayRedis, nil)
	assert.Equal(t, 0, testutil.CollectAndCount(m.replay, NameReplayEntries))
	problems, err := testutil.GatherAndLint(m.Registry())
	require.NoError(t, err)
	assert.Empty(t, problems)
}

func TestEngineSeriesOnlyOnSecuredRoutes(t *testing.T) {
	m := New(BuildInfo{})
	open, secured := m.Route("open"), m.Route("orders")
	secured.Secured()
	open.Engine(EngineDOM, time.Millisecond) // not recorded: no engine runs there
	secured.Engine(EngineTemplate, 50*time.Microsecond)
	secured.Engine("bogus", time.Millisecond)
	assert.Equal(t, 2, testutil.CollectAndCount(m.engines))
	assert.Equal(t, 5, len(LookupResults()))
}
