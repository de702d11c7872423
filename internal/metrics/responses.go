package metrics

import "github.com/prometheus/client_golang/prometheus"

// newResponseSigning is the response-signing counter. A response on a
// signing route that the partner gets unsigned is always one of the
// results other than signed and passed, so an alert can watch them.
func newResponseSigning() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: NameResponseSigning,
		Help: "Responses on routes that sign them, by route and result: signed; failed (could not be signed, " +
			"the partner got a 502 fault); aborted (a streamed response cut before its signature part); passed " +
			"(nothing to sign, an empty one-way reply); backend_error (the backend was unreachable, timed out or " +
			"broke off, the partner got the gateway's unsigned 502 or 504 fault).",
	}, []string{LabelRoute, LabelResult})
}

// ResponseResults lists the values of the result label of response
// signing.
func ResponseResults() []string {
	return []string{ResponseSigned, ResponseFailed, ResponseAborted, ResponsePassed, ResponseBackendError}
}

// ResponseMetrics are the response-signing handles of one route that signs
// its responses.
type ResponseMetrics struct {
	results map[string]prometheus.Counter
}

// Responses returns the handles of a signing route, every result series
// created at zero so that rate() works before the first failure. Routes
// that do not sign get no series.
func (m *Metrics) Responses(route string) *ResponseMetrics {
	rm := &ResponseMetrics{results: map[string]prometheus.Counter{}}
	for _, r := range ResponseResults() {
		rm.results[r] = m.responses.WithLabelValues(route, r)
	}
	return rm
}

// Result counts one response. result must be one of ResponseResults;
// others are not counted, so that the label stays a closed set.
func (rm *ResponseMetrics) Result(result string) {
	if c, ok := rm.results[result]; ok {
		c.Inc()
	}
}
