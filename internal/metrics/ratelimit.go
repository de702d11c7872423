package metrics

import "github.com/prometheus/client_golang/prometheus"

func newRateLimitRejections() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: NameRateLimitRejections,
		Help: "Requests refused with 429 by a rate or concurrency limit, by route and scope (route, client, signer).",
	}, []string{LabelRoute, LabelScope})
}

// RateLimitMetrics are one route's rejection counters, resolved once.
type RateLimitMetrics struct {
	byScope map[string]prometheus.Counter
}

// RateLimits returns a route's rejection counters, creating every scope's
// series at zero so that rate() and alerts work before the first refusal.
func (m *Metrics) RateLimits(route string) *RateLimitMetrics {
	rl := &RateLimitMetrics{byScope: map[string]prometheus.Counter{}}
	for _, s := range RateLimitScopes() {
		rl.byScope[s] = m.rateLimits.WithLabelValues(route, s)
	}
	return rl
}

// Rejected counts a refusal by a limit of scope; an unknown scope is a
// bug and is not counted.
func (rl *RateLimitMetrics) Rejected(scope string) {
	if c, ok := rl.byScope[scope]; ok {
		c.Inc()
	}
}
