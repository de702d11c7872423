package gateway

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wssgw/wssgw/internal/metrics"
)

// responseResults counts wssgw_response_signing_total{route,result}.
type responseResults struct{ c *prometheus.CounterVec }

// newResponseResults registers the counter once per registry; gateways
// built again on the same metrics (tests, reloads) share it.
func newResponseResults(m *metrics.Metrics) (*responseResults, error) {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: metrics.NameResponseSigning,
		Help: "Responses on routes that sign them, by route and result (signed, failed, aborted, passed).",
	}, []string{metrics.LabelRoute, metrics.LabelResult})
	if err := m.Registry().Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			return nil, err
		}
		c = are.ExistingCollector.(*prometheus.CounterVec)
	}
	return &responseResults{c: c}, nil
}

// init creates a route's series at zero, so that rate() works before the
// first failure.
func (r *responseResults) init(route string) {
	for _, v := range []string{metrics.ResponseSigned, metrics.ResponseFailed, metrics.ResponseAborted, metrics.ResponsePassed} {
		r.c.WithLabelValues(route, v)
	}
}

func (r *responseResults) inc(route, result string) { r.c.WithLabelValues(route, result).Inc() }
