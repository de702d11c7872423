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

// filler is a store with a capacity (replay.Memory).
type filler interface {
	Len() int
	Cap() int
}

// observeReplay wraps s, the store replay.store names (memory or redis),
// with its metrics. A store that knows its fill (the memory store) exports
// it too, since a full one rejects every secured request.
func observeReplay(s replay.Store, kind string, m *metrics.Metrics) replay.Store {
	var size metrics.ReplaySize
	if f, ok := s.(filler); ok {
		size = func() (int, int) { return f.Len(), f.Cap() }
	}
	if kind != metrics.ReplayRedis {
		kind = metrics.ReplayMemory
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
