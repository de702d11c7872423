package metrics

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// Values of the cause label of replay store resets (replay.Reset.Cause).
const (
	// ReplayResetStartup: the store began empty with this process (the
	// memory store; a Redis without the deployment's canary key).
	ReplayResetStartup = "startup"
	// ReplayResetLost: a Redis store lost its keys under a running
	// gateway (restarted, flushed, failed over).
	ReplayResetLost = "lost"
)

// ReplayResetCauses lists every cause, for pre-initialized series.
func ReplayResetCauses() []string { return []string{ReplayResetStartup, ReplayResetLost} }

// replayResets holds the replay store's reset counter and window gauge.
// Both exist from start-up, so that alerts work before the first reset;
// the gauge is 0 until a gateway supplies its source.
type replayResets struct {
	resets *prometheus.CounterVec
	window prometheus.GaugeFunc
	// inWindow reports whether the post-reset window is open; a reloaded
	// gateway replaces it (WatchReplayStore).
	inWindow atomic.Pointer[func() bool]
}

func newReplayResets() *replayResets {
	s := &replayResets{
		resets: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameReplayStoreResets,
			Help: "Times the replay store was found to have lost its keys, by cause: startup (began empty with this process) or lost (Redis restarted, flushed or failed over under the gateway).",
		}, []string{LabelCause}),
	}
	s.window = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: NameReplayStoreResetWindow,
		Help: "1 while the window after the replay store's latest reset is open: messages created before the reset are refused (reason replay_store_reset).",
	}, func() float64 {
		if f := s.inWindow.Load(); f != nil && (*f)() {
			return 1
		}
		return 0
	})
	for _, c := range ReplayResetCauses() {
		s.resets.WithLabelValues(c)
	}
	return s
}

func (s *replayResets) collectors() []prometheus.Collector {
	return []prometheus.Collector{s.resets, s.window}
}

// ReplayStoreReset counts a reset of the replay store.
func (m *Metrics) ReplayStoreReset(cause string) {
	m.replayResets.resets.WithLabelValues(cause).Inc()
}

// WatchReplayStore makes inWindow the source of the window gauge.
func (m *Metrics) WatchReplayStore(inWindow func() bool) {
	m.replayResets.inWindow.Store(&inWindow)
}
