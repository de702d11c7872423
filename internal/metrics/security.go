package metrics

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// security holds the WS-Security metrics.
type security struct {
	stages     *prometheus.HistogramVec
	failures   *prometheus.CounterVec
	algorithms *prometheus.CounterVec
	stripped   *prometheus.CounterVec
}

func newSecurity() *security {
	return &security{
		stages: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    NameStageDuration,
			Help:    "Time spent in each stage of the security pipeline, by route and stage.",
			Buckets: LatencyBuckets,
		}, []string{LabelRoute, LabelStage}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameSecurityFailure,
			Help: "Requests rejected by WS-Security processing, by policy and reason (a closed set).",
		}, []string{LabelPolicy, LabelReason}),
		algorithms: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameAlgorithmUses,
			Help: "Algorithms, key reference kinds and key sizes partners use, by policy: who still sends SHA-1 or CBC.",
		}, []string{LabelPolicy, LabelKind, LabelAlg}),
		stripped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameUnsignedStripped,
			Help: "Header blocks, Envelope/Header attributes and comments no trusted signature covered, left out of forwarded requests, by policy and kind.",
		}, []string{LabelPolicy, LabelKind}),
	}
}

func (s *security) collectors() []prometheus.Collector {
	return []prometheus.Collector{s.stages, s.failures, s.algorithms, s.stripped}
}

// PolicyMetrics are one policy's security counters.
type PolicyMetrics struct {
	name       string
	failures   map[string]prometheus.Counter
	algorithms *prometheus.CounterVec
	stripped   *prometheus.CounterVec
	legacy     *prometheus.CounterVec // legacy.go
	signers    *legacySigners
	// uses are the algorithm counters already resolved, by useKey: a
	// message counts several uses, and WithLabelValues hashes and checks
	// every label each time (issue 14: the per-request cost around the
	// engine). The labels are a closed set; maxUseCounters bounds the
	// cache anyway.
	uses  sync.Map // useKey -> prometheus.Counter
	nUses atomic.Int32
}

type useKey struct{ kind, label string }

// maxUseCounters bounds PolicyMetrics.uses: kinds times the labels of each.
const maxUseCounters = 512

// Policy returns the handles of a policy, with a failure series per reason
// created at zero so that rate() works before the first failure.
func (m *Metrics) Policy(name string, reasons []string) *PolicyMetrics {
	pm := &PolicyMetrics{name: name, failures: map[string]prometheus.Counter{}, algorithms: m.sec.algorithms, stripped: m.sec.stripped,
		legacy: m.legacy, signers: m.signersOf(name)}
	for _, r := range reasons {
		pm.failures[r] = m.sec.failures.WithLabelValues(name, r)
	}
	return pm
}

// Failure counts a rejected request. reason must be one of the reasons the
// handles were created with; others count as "unknown".
func (pm *PolicyMetrics) Failure(reason string) {
	c, ok := pm.failures[reason]
	if !ok {
		c = pm.failures["unknown"]
	}
	if c != nil {
		c.Inc()
	}
}

// Use counts one use of an algorithm (kind is signature, digest, c14n,
// key_transport, data, key_reference or key_size). Callers map values to a
// closed set of labels.
func (pm *PolicyMetrics) Use(kind, label string) {
	k := useKey{kind, label}
	if c, ok := pm.uses.Load(k); ok {
		c.(prometheus.Counter).Inc()
		return
	}
	c := pm.algorithms.WithLabelValues(pm.name, kind, label)
	if pm.nUses.Load() < maxUseCounters {
		if _, loaded := pm.uses.LoadOrStore(k, c); !loaded {
			pm.nUses.Add(1)
		}
	}
	c.Inc()
}

// InitStripped creates the stripped-content series of the given kinds at
// zero, so that rate() works before a partner first sends unsigned content.
func (pm *PolicyMetrics) InitStripped(kinds ...string) {
	for _, k := range kinds {
		pm.stripped.WithLabelValues(pm.name, k)
	}
}

// Stripped counts n pieces of unsigned content of one kind (header,
// attribute or comment: a closed set) left out of a forwarded request.
func (pm *PolicyMetrics) Stripped(kind string, n int) {
	pm.stripped.WithLabelValues(pm.name, kind).Add(float64(n))
}

// Stage records the time a request spent in a pipeline stage.
func (rm *RouteMetrics) Stage(stage string, d time.Duration) {
	if o, ok := rm.stages[stage]; ok {
		o.Observe(d.Seconds())
	}
}
