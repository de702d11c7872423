package metrics

import (
	"net/http"
	"runtime"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// BuildInfo is exported as the labels of wssgw_build_info.
type BuildInfo struct {
	Version, Revision string
	// CryptoBackend is what does the private-key operations
	// (crypto.Backend: go, go-boringcrypto or openssl; issue 18).
	CryptoBackend string
}

// Metrics is the registry and every metric the gateway exports.
type Metrics struct {
	reg       *prometheus.Registry
	requests  *prometheus.CounterVec
	duration  *prometheus.HistogramVec
	backend   *prometheus.HistogramVec
	received  *prometheus.CounterVec
	sent      *prometheus.CounterVec
	inFlight  prometheus.Gauge
	readiness prometheus.Gauge
	sec       *security
	tpl       *templates
	certs     *certificates
	responses *prometheus.CounterVec
	// OCSP (ocsp.go)
	ocspFetches *prometheus.CounterVec
	ocspCache   *ocspCache
	// TLS handshakes (tls.go)
	tlsFailures *prometheus.CounterVec
	// Engine time (engines.go), replay store (replay.go), legacy
	// algorithms (legacy.go)
	engines *prometheus.HistogramVec
	replay  *replayStore
	legacy  *prometheus.CounterVec
	signers sync.Map // policy name → *legacySigners, kept across reloads
	// rate and concurrency limits (ratelimit.go)
	rateLimits *prometheus.CounterVec
	rateTables *rateLimitTables
	// Reloads (reload.go)
	reloads *reloads
	// replay store resets (replayreset.go)
	replayResets *replayResets
	// the memory budget (memory.go)
	mem *memory
	// egress routes (egress.go)
	egress *prometheus.CounterVec
}

// New builds a private registry with the gateway's metrics and the Go and
// process collectors.
func New(build BuildInfo) *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{
		reg: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameRequests,
			Help: "Requests handled, by route and outcome.",
		}, []string{LabelRoute, LabelOutcome}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    NameRequestDuration,
			Help:    "Time from receiving request headers to the end of the response, by route.",
			Buckets: LatencyBuckets,
		}, []string{LabelRoute}),
		backend: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    NameBackendDuration,
			Help:    "Time from sending a request to the backend to receiving its response headers, by route.",
			Buckets: LatencyBuckets,
		}, []string{LabelRoute}),
		received: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameReceivedBytes,
			Help: "Request body bytes received from clients, by route.",
		}, []string{LabelRoute}),
		sent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameSentBytes,
			Help: "Response body bytes sent to clients, by route.",
		}, []string{LabelRoute}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: NameInFlight,
			Help: "Requests being handled now.",
		}),
		readiness: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: NameReady,
			Help: "1 while the gateway accepts traffic, 0 before start-up and during drain.",
		}),
	}
	info := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: NameBuildInfo,
		Help: "Build information; the value is always 1.",
		ConstLabels: prometheus.Labels{"version": build.Version, "revision": build.Revision, "goversion": runtime.Version(),
			LabelCryptoBackend: build.CryptoBackend},
	})
	info.Set(1)
	m.sec = newSecurity()
	reg.MustRegister(m.sec.collectors()...)
	m.tpl = newTemplates()
	reg.MustRegister(m.tpl.collectors()...)
	m.certs = newCertificates()
	reg.MustRegister(m.certs)
	m.responses = newResponseSigning()
	reg.MustRegister(m.responses)
	m.ocspFetches, m.ocspCache = newOCSPFetches(), newOCSPCache()
	reg.MustRegister(m.ocspFetches, m.ocspCache)
	m.tlsFailures = newTLSHandshakeFailures()
	reg.MustRegister(m.tlsFailures)
	m.engines, m.replay, m.legacy = newEngineDuration(), newReplayStore(), newLegacyAlgorithms()
	reg.MustRegister(m.engines, m.replay, m.legacy)
	m.rateLimits = newRateLimitRejections()
	m.rateTables = newRateLimitTables()
	reg.MustRegister(m.rateLimits, m.rateTables)
	m.reloads = newReloads()
	reg.MustRegister(m.reloads.collectors()...)
	m.replayResets = newReplayResets()
	reg.MustRegister(m.replayResets.collectors()...)
	m.mem = newMemory()
	reg.MustRegister(m.mem.collectors()...)
	m.egress = newEgressRequests()
	reg.MustRegister(m.egress)
	reg.MustRegister(m.requests, m.duration, m.backend, m.received, m.sent, m.inFlight, m.readiness, info,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Registry is the private registry, for tests and further collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg, EnableOpenMetrics: true})
}

// InFlight is the gauge of requests being handled.
func (m *Metrics) InFlight() prometheus.Gauge { return m.inFlight }

// SetReady records readiness.
func (m *Metrics) SetReady(ready bool) {
	if ready {
		m.readiness.Set(1)
	} else {
		m.readiness.Set(0)
	}
}

// RouteMetrics are one route's handles, resolved once so that a request
// updates metrics without label lookups.
type RouteMetrics struct {
	outcomes [numOutcomes]prometheus.Counter
	duration prometheus.Observer
	backend  prometheus.Observer
	received prometheus.Counter
	sent     prometheus.Counter
	stages   map[string]prometheus.Observer
	lookups  map[string]prometheus.Counter
	name     string
	m        *Metrics
	engines  map[string]prometheus.Observer // secured routes only (engines.go)
}

// Route returns the handles for a route, creating every outcome series at
// zero so that rate() and absent() work before the first failure.
func (m *Metrics) Route(name string) *RouteMetrics {
	rm := &RouteMetrics{
		duration: m.duration.WithLabelValues(name),
		backend:  m.backend.WithLabelValues(name),
		received: m.received.WithLabelValues(name),
		sent:     m.sent.WithLabelValues(name),
		stages:   map[string]prometheus.Observer{},
		lookups:  map[string]prometheus.Counter{},
		name:     name,
		m:        m,
	}
	for _, st := range []string{StageGate, StageMatch, StageVerify, StageDecrypt, StagePolicy, StageSign} {
		rm.stages[st] = m.sec.stages.WithLabelValues(name, st)
	}
	for _, r := range LookupResults() {
		rm.lookups[r] = m.tpl.lookups.WithLabelValues(name, r)
	}
	for _, o := range Outcomes() {
		rm.outcomes[o] = m.requests.WithLabelValues(name, o.String())
	}
	return rm
}

// Done records a finished request.
func (rm *RouteMetrics) Done(o Outcome, elapsed time.Duration, received, sent int64) {
	if o < numOutcomes {
		rm.outcomes[o].Inc()
	}
	rm.duration.Observe(elapsed.Seconds())
	rm.received.Add(float64(received))
	rm.sent.Add(float64(sent))
}

// Backend records the time to the backend's response headers.
func (rm *RouteMetrics) Backend(elapsed time.Duration) { rm.backend.Observe(elapsed.Seconds()) }
