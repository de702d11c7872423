package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Values of the result label of OCSP fetches (the same strings as the
// trust package's OCSP results; metrics does not import trust).
const (
	OCSPGood    = "good"
	OCSPRevoked = "revoked"
	OCSPUnknown = "unknown"
	OCSPError   = "error"
)

// Values of the status label of the OCSP cache: a fetch result, or stale
// (the last response is past NextUpdate plus maxStaleness) or missing (no
// response yet).
const (
	OCSPStale   = "stale"
	OCSPMissing = "missing"
)

// OCSPFetchResults lists the values of the result label of OCSP fetches.
func OCSPFetchResults() []string { return []string{OCSPGood, OCSPRevoked, OCSPUnknown, OCSPError} }

// OCSPStatuses lists the values of the status label of the OCSP cache.
func OCSPStatuses() []string {
	return []string{OCSPGood, OCSPRevoked, OCSPUnknown, OCSPStale, OCSPMissing}
}

func newOCSPFetches() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: NameOCSPFetches,
		Help: "OCSP responses fetched in the background, by policy and result: good, revoked and unknown " +
			"(the responder's answer); error (no usable response: unreachable, HTTP error, bad signature, " +
			"older than the one held).",
	}, []string{LabelPolicy, LabelResult})
}

// OCSPSource reports a policy's OCSP cache at scrape time: certificates by
// status and the age in seconds of the oldest response held.
type OCSPSource func() (byStatus map[string]int, oldestSeconds float64)

// ocspCache is a collector of the cache gauges of every policy with OCSP.
type ocspCache struct {
	certs, oldest *prometheus.Desc
	mu            sync.Mutex
	sources       map[string]OCSPSource
}

func newOCSPCache() *ocspCache {
	return &ocspCache{
		certs: prometheus.NewDesc(NameOCSPCertificates,
			"Certificates whose OCSP status the gateway keeps, by policy and status (good, revoked, unknown, "+
				"stale: past NextUpdate plus maxStaleness, missing: no response yet).",
			[]string{LabelPolicy, LabelStatus}, nil),
		oldest: prometheus.NewDesc(NameOCSPOldestResponse,
			"Age (now minus ThisUpdate) of the oldest OCSP response held, by policy; 0 when none is held.",
			[]string{LabelPolicy}, nil),
		sources: map[string]OCSPSource{},
	}
}

func (c *ocspCache) Describe(ch chan<- *prometheus.Desc) { ch <- c.certs; ch <- c.oldest }

func (c *ocspCache) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for policy, src := range c.sources {
		by, oldest := src()
		for _, s := range OCSPStatuses() {
			ch <- prometheus.MustNewConstMetric(c.certs, prometheus.GaugeValue, float64(by[s]), policy, s)
		}
		ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, oldest, policy)
	}
}

// WatchOCSP exports a policy's OCSP cache and returns the function that
// counts its fetches (every result series created at zero; a result
// outside OCSPFetchResults is not counted). A second call for the same
// policy (a restart of the gateway in the same process) replaces the source.
func (m *Metrics) WatchOCSP(policy string, src OCSPSource) func(result string) {
	m.ocspCache.mu.Lock()
	m.ocspCache.sources[policy] = src
	m.ocspCache.mu.Unlock()
	counters := map[string]prometheus.Counter{}
	for _, r := range OCSPFetchResults() {
		counters[r] = m.ocspFetches.WithLabelValues(policy, r)
	}
	return func(result string) {
		if c, ok := counters[result]; ok {
			c.Inc()
		}
	}
}
