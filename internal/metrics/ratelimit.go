package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

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

// RateLimitSource reports, at scrape time, each route's remembered
// identities by scope (ScopeClient, ScopeSigner) and how many were
// forgotten to make room so far.
type RateLimitSource func(yield func(route, scope string, tracked int, forgotten uint64))

// rateLimitTables is the collector of the tracked and forgotten
// identities; its source is the current gateway's limits.
type rateLimitTables struct {
	tracked, forgotten *prometheus.Desc
	mu                 sync.Mutex
	src                RateLimitSource
}

func newRateLimitTables() *rateLimitTables {
	return &rateLimitTables{
		tracked: prometheus.NewDesc(NameRateLimitTracked,
			"Clients and signers the rate and concurrency limits remember, by route and scope (client, signer); at most clients.maxTracked each.",
			[]string{LabelRoute, LabelScope}, nil),
		forgotten: prometheus.NewDesc(NameRateLimitForgotten,
			"Clients and signers the limits forgot to make room for new ones (least recently seen first), by route and scope.",
			[]string{LabelRoute, LabelScope}, nil),
	}
}

func (c *rateLimitTables) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.tracked
	ch <- c.forgotten
}

func (c *rateLimitTables) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	src := c.src
	c.mu.Unlock()
	if src == nil {
		return
	}
	src(func(route, scope string, tracked int, forgotten uint64) {
		ch <- prometheus.MustNewConstMetric(c.tracked, prometheus.GaugeValue, float64(tracked), route, scope)
		ch <- prometheus.MustNewConstMetric(c.forgotten, prometheus.CounterValue, float64(forgotten), route, scope)
	})
}

// WatchRateLimits makes src the source of the tracked and forgotten
// identities, replacing the previous one (a reload's new gateway).
func (m *Metrics) WatchRateLimits(src RateLimitSource) {
	m.rateTables.mu.Lock()
	m.rateTables.src = src
	m.rateTables.mu.Unlock()
}
