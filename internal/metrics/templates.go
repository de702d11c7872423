package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
)

// templates holds the template automaton's metrics.
type templates struct {
	lookups *prometheus.CounterVec
	learned *prometheus.CounterVec
	skipped *prometheus.CounterVec
	evicted *prometheus.CounterVec
	count   *prometheus.GaugeVec
	bytes   *prometheus.GaugeVec
	shadow  *prometheus.CounterVec
}

func newTemplates() *templates {
	return &templates{
		lookups: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameTemplateLookups,
			Help: "Secured requests by template lookup result: hit, or why the DOM engine handled it.",
		}, []string{LabelRoute, LabelResult}),
		learned: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameTemplatesLearned,
			Help: "Templates learned from messages the DOM engine accepted, by policy.",
		}, []string{LabelPolicy}),
		skipped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameTemplatesSkipped,
			Help: "Accepted messages of a new shape not learned, by policy and reason.",
		}, []string{LabelPolicy, LabelReason}),
		evicted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameTemplatesEvicted,
			Help: "Cold templates evicted to stay within the configured bounds, by policy.",
		}, []string{LabelPolicy}),
		count: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: NameTemplates,
			Help: "Templates held now, by policy.",
		}, []string{LabelPolicy}),
		bytes: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: NameTemplateBytes,
			Help: "Estimated memory held by templates, by policy.",
		}, []string{LabelPolicy}),
		shadow: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameShadowChecks,
			Help: "Template-path messages re-verified by the DOM engine, by policy and result; any disagreement rejects the message; skipped: a sampled check found no free DOM worker. disagree also counts a learned template whose fast Body pass gave another digest than exclusive C14N on its own message (its fast pass is then off).",
		}, []string{LabelPolicy, LabelResult}),
	}
}

func (t *templates) collectors() []prometheus.Collector {
	return []prometheus.Collector{t.lookups, t.learned, t.skipped, t.evicted, t.count, t.bytes, t.shadow}
}

// TemplateMetrics are one policy's template-store handles.
type TemplateMetrics struct {
	Learned prometheus.Counter
	Evicted prometheus.Counter
	Count   prometheus.Gauge
	Bytes   prometheus.Gauge
	skipped map[string]prometheus.Counter
	shadow  map[string]prometheus.Counter
}

// Templates returns the handles of a policy's template store, every series
// created at zero.
func (m *Metrics) Templates(policy string) *TemplateMetrics {
	t := m.tpl
	tm := &TemplateMetrics{
		Learned: t.learned.WithLabelValues(policy),
		Evicted: t.evicted.WithLabelValues(policy),
		Count:   t.count.WithLabelValues(policy),
		Bytes:   t.bytes.WithLabelValues(policy),
		skipped: map[string]prometheus.Counter{},
		shadow:  map[string]prometheus.Counter{},
	}
	for _, r := range SkipReasons() {
		tm.skipped[r] = t.skipped.WithLabelValues(policy, r)
	}
	for _, r := range ShadowResults() {
		tm.shadow[r] = t.shadow.WithLabelValues(policy, r)
	}
	return tm
}

// SkipReasons lists the values of the reason label of skipped learning.
func SkipReasons() []string {
	return []string{SkipRateLimited, SkipFull, SkipUnsupported, SkipFirstSight}
}

// Skipped counts a message of a new shape that was not learned.
func (tm *TemplateMetrics) Skipped(reason string) {
	if c, ok := tm.skipped[reason]; ok {
		c.Inc()
	}
}

// Shadow counts a shadow check's result.
func (tm *TemplateMetrics) Shadow(result string) {
	if c, ok := tm.shadow[result]; ok {
		c.Inc()
	}
}

// Lookup counts a template lookup result on the route.
func (rm *RouteMetrics) Lookup(result string) {
	if c, ok := rm.lookups[result]; ok {
		c.Inc()
	}
}
