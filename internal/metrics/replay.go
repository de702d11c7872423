package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// replayStore holds the replay store's metrics: operations and their
// latency per store kind, and the fill of a store that has a capacity.
type replayStore struct {
	ops      *prometheus.CounterVec
	duration *prometheus.HistogramVec
	entries  *prometheus.Desc
	capacity *prometheus.Desc
	mu       sync.Mutex
	kind     string
	size     ReplaySize
}

// ReplaySize reports a store's entries held (expired ones not yet swept
// included) and its capacity, at scrape time.
type ReplaySize func() (entries, capacity int)

func newReplayStore() *replayStore {
	return &replayStore{
		ops: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameReplayOperations,
			Help: "Replay store look-ups (one per accepted signature or UsernameToken nonce), by store (memory, redis) " +
				"and result: recorded (first sight), replayed, error (the store could not answer; the message is rejected).",
		}, []string{LabelStore, LabelResult}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    NameReplayDuration,
			Help:    "Time of one replay store look-up (for redis, a SET NX round trip), by store.",
			Buckets: LatencyBuckets,
		}, []string{LabelStore}),
		entries: prometheus.NewDesc(NameReplayEntries,
			"Keys the memory replay store holds now (expired ones not yet swept included), by store.",
			[]string{LabelStore}, nil),
		capacity: prometheus.NewDesc(NameReplayCapacity,
			"Keys the memory replay store can hold (replay.maxEntries); when full, secured requests are rejected.",
			[]string{LabelStore}, nil),
	}
}

func (r *replayStore) Describe(ch chan<- *prometheus.Desc) {
	r.ops.Describe(ch)
	r.duration.Describe(ch)
	ch <- r.entries
	ch <- r.capacity
}

func (r *replayStore) Collect(ch chan<- prometheus.Metric) {
	r.ops.Collect(ch)
	r.duration.Collect(ch)
	r.mu.Lock()
	kind, size := r.kind, r.size
	r.mu.Unlock()
	if size == nil {
		return
	}
	n, c := size()
	ch <- prometheus.MustNewConstMetric(r.entries, prometheus.GaugeValue, float64(n), kind)
	ch <- prometheus.MustNewConstMetric(r.capacity, prometheus.GaugeValue, float64(c), kind)
}

// ReplayMetrics are the handles of the replay store in use.
type ReplayMetrics struct {
	results  map[string]prometheus.Counter
	duration prometheus.Observer
}

// ReplayStore returns the handles of the gateway's replay store of the
// given kind (ReplayMemory or ReplayRedis), every result series created at
// zero. size, when not nil, exports the store's fill (the memory store);
// Redis reports its own memory (redis_exporter). A second call (a new
// gateway in the same process) replaces the size source.
func (m *Metrics) ReplayStore(kind string, size ReplaySize) *ReplayMetrics {
	m.replay.mu.Lock()
	m.replay.kind, m.replay.size = kind, size
	m.replay.mu.Unlock()
	rm := &ReplayMetrics{results: map[string]prometheus.Counter{}, duration: m.replay.duration.WithLabelValues(kind)}
	for _, r := range ReplayResults() {
		rm.results[r] = m.replay.ops.WithLabelValues(kind, r)
	}
	return rm
}

// Seen records one look-up that took d.
func (rm *ReplayMetrics) Seen(d time.Duration, replayed bool, err error) {
	result := ReplayRecorded
	switch {
	case err != nil:
		result = ReplayError
	case replayed:
		result = ReplayReplayed
	}
	rm.results[result].Inc()
	rm.duration.Observe(d.Seconds())
}
