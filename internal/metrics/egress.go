package metrics

import "github.com/prometheus/client_golang/prometheus"

// newEgressRequests is the egress counter: how the calls of egress routes
// that wssgw handled past reading the request ended, so that an alert can
// watch the rejected ones. Refusals before that (limits, overload, a
// client too slow or too large) are only in wssgw_requests_total.
func newEgressRequests() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: NameEgressRequests,
		Help: "Calls of egress routes (the legacy client to a partner), by route and result: verified (the " +
			"partner's response verified, the client got its plaintext); partner_fault (a SOAP Fault passed to the " +
			"client); rejected (the response failed verification, the client got a 502 fault); secure_failed (the " +
			"request could not be secured); partner_error (the partner was unreachable, timed out or broke off); " +
			"passed (an empty one-way reply).",
	}, []string{LabelRoute, LabelResult})
}

// EgressResults lists the values of the result label of egress requests.
func EgressResults() []string {
	return []string{EgressVerified, EgressPartnerFault, EgressRejected, EgressSecureFailed, EgressPartnerError, EgressPassed}
}

// EgressMetrics are the handles of one egress route.
type EgressMetrics struct {
	results map[string]prometheus.Counter
}

// Egress returns the handles of an egress route, every result series
// created at zero so that rate() and the alerts work before the first
// failure. Ingress routes get no series.
func (m *Metrics) Egress(route string) *EgressMetrics {
	em := &EgressMetrics{results: map[string]prometheus.Counter{}}
	for _, r := range EgressResults() {
		em.results[r] = m.egress.WithLabelValues(route, r)
	}
	return em
}

// Result counts one call. result must be one of EgressResults; others are
// not counted, so that the label stays a closed set.
func (em *EgressMetrics) Result(result string) {
	if c, ok := em.results[result]; ok {
		c.Inc()
	}
}
