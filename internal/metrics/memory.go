package metrics

import "github.com/prometheus/client_golang/prometheus"

// Values of the reason label of overload rejections, the same as
// internal/budget's reasons.
const (
	OverloadMemory = "memory"    // the body would not fit in server.memory.inflightBytes
	OverloadQueue  = "dom_queue" // no DOM-engine worker within server.memory.queueWait
	// OverloadShare is dom_queue while template hits flowed and the DOM
	// engine was held to server.memory.domShare (issue 14).
	OverloadShare = "dom_share"
	// OverloadFirstSight is a message of a shape never accepted before
	// refused at once because its first-sight lane was busy or cooling
	// while template hits flowed (server.memory.firstSightShare, issue 14).
	OverloadFirstSight = "first_sight"
)

// OverloadReasons lists every reason, for pre-initialized series.
func OverloadReasons() []string {
	return []string{OverloadMemory, OverloadQueue, OverloadShare, OverloadFirstSight}
}

// memory is the memory budget's gauges and the overload counter.
type memory struct {
	inflight, budget prometheus.Gauge
	rejections       *prometheus.CounterVec
}

func newMemory() *memory {
	return &memory{
		inflight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: NameMemoryInflight,
			Help: "Request body bytes held in memory by in-flight requests, all routes together.",
		}),
		budget: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: NameMemoryBudget,
			Help: "The bound on wssgw_memory_inflight_bytes (server.memory.inflightBytes); 0 means none.",
		}),
		rejections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameOverloadRejections,
			Help: "Requests refused with 503 and Retry-After by the memory budget, by route and reason.",
		}, []string{LabelRoute, LabelReason}),
	}
}

func (m *memory) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.inflight, m.budget, m.rejections}
}

// MemoryHeld sets the bytes held by in-flight requests.
func (m *Metrics) MemoryHeld(bytes int64) { m.mem.inflight.Set(float64(bytes)) }

// MemoryBudget sets the budget.
func (m *Metrics) MemoryBudget(bytes int64) { m.mem.budget.Set(float64(bytes)) }

// WatchOverload creates a route's rejection series at zero, so that
// rate() and alerts work before the first one.
func (m *Metrics) WatchOverload(route string) {
	for _, r := range OverloadReasons() {
		m.mem.rejections.WithLabelValues(route, r)
	}
}

// Overloaded counts a refused request. A reason outside the closed set is
// counted as memory.
func (m *Metrics) Overloaded(route, reason string) {
	if reason != OverloadQueue && reason != OverloadShare && reason != OverloadFirstSight {
		reason = OverloadMemory
	}
	m.mem.rejections.WithLabelValues(route, reason).Inc()
}
