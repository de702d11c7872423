package gateway

import (
	"context"
	"time"

	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/replay"
)

// observedStore is a replay store whose look-ups are counted and timed:
// the replay store's health on the dashboard (Redis latency and errors,
// issue 16). Embedding keeps every other method of the store.
type observedStore struct {
	replay.Store
	metrics *metrics.ReplayMetrics
}

// observeReplay wraps s with its metrics; the memory store also exports
// its fill, since a full one rejects every secured request.
func observeReplay(s replay.Store, m *metrics.Metrics) replay.Store {
	kind, size := metrics.ReplayRedis, metrics.ReplaySize(nil)
	if mem, ok := s.(*replay.Memory); ok {
		kind = metrics.ReplayMemory
		size = func() (int, int) { return mem.Len(), mem.Cap() }
	}
	return observedStore{Store: s, metrics: m.ReplayStore(kind, size)}
}

// Seen implements replay.Store.
func (s observedStore) Seen(ctx context.Context, key []byte, expires time.Time) (bool, error) {
	start := time.Now()
	replayed, err := s.Store.Seen(ctx, key, expires)
	s.metrics.Seen(time.Since(start), replayed, err)
	return replayed, err
}
