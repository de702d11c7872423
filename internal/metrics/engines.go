package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// newEngineDuration is the engine-time histogram. The request duration
// has no engine label: it is dominated by the backend, and the label
// would triple its series on every route. The engine's own time is what
// the template path changes (issue 16).
func newEngineDuration() *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: NameEngineDuration,
		Help: "Time the WS-Security engine took on a message it verified (gate, template match, decryption, " +
			"signature checks; not the policy check, replay store or backend), by route and engine (template, dom).",
		Buckets: LatencyBuckets,
	}, []string{LabelRoute, LabelEngine})
}

// Secured creates the route's engine series at zero. Only routes with a
// security policy call it: a pass-through route runs no engine and gets no
// engine series.
func (rm *RouteMetrics) Secured() {
	rm.engines = map[string]prometheus.Observer{}
	for _, e := range []string{EngineTemplate, EngineDOM} {
		rm.engines[e] = rm.m.engines.WithLabelValues(rm.name, e)
	}
}

// Engine records the time an engine (EngineTemplate or EngineDOM) took on
// a verified message; other engines, or a route that is not Secured, are
// not recorded.
func (rm *RouteMetrics) Engine(engine string, d time.Duration) {
	if o, ok := rm.engines[engine]; ok {
		o.Observe(d.Seconds())
	}
}
