package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Values of the result label of configuration reloads.
const (
	ReloadSuccess = "success"
	ReloadFailure = "failure"
)

// Values of the kind label of key material reload failures.
const (
	KeyKindTrust       = "trust"       // policies.*.trust
	KeyKindDecryption  = "decryption"  // policies.*.decryptionKeys[]
	KeyKindSigning     = "signing"     // policies.*.responses
	KeyKindCredentials = "credentials" // policies.*.usernameToken.credentialsFile
)

// KeyKinds lists the values of the kind label.
func KeyKinds() []string {
	return []string{KeyKindTrust, KeyKindDecryption, KeyKindSigning, KeyKindCredentials}
}

// reloads holds the reload metrics.
type reloads struct {
	config      *prometheus.CounterVec
	lastOK      prometheus.Gauge
	lastSuccess prometheus.Gauge
	keyFailures *prometheus.CounterVec
}

func newReloads() *reloads {
	r := &reloads{
		config: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameConfigReloads,
			Help: "Configuration reloads (SIGHUP or a change of the config file or a file it names), by result; a failed one keeps the running configuration.",
		}, []string{LabelResult}),
		lastOK: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: NameConfigLastReloadSuccessful,
			Help: "1 when the last configuration load succeeded, 0 while the gateway runs an older configuration because the last reload failed.",
		}),
		lastSuccess: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: NameConfigLastReloadSuccess,
			Help: "Unix time of the last successful configuration load (start-up or reload).",
		}),
		keyFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: NameKeyReloadFailures,
			Help: "Failed reloads of key material files (the previous material stays in use), by kind: trust, decryption, signing, credentials.",
		}, []string{LabelKind}),
	}
	for _, res := range []string{ReloadSuccess, ReloadFailure} {
		r.config.WithLabelValues(res)
	}
	for _, k := range KeyKinds() {
		r.keyFailures.WithLabelValues(k)
	}
	return r
}

func (r *reloads) collectors() []prometheus.Collector {
	return []prometheus.Collector{r.config, r.lastOK, r.lastSuccess, r.keyFailures}
}

// ConfigLoaded records the configuration loaded at start-up: the reload
// gauges start from it.
func (m *Metrics) ConfigLoaded(at time.Time) {
	m.reloads.lastOK.Set(1)
	m.reloads.lastSuccess.Set(float64(at.Unix()))
}

// ConfigReload counts a reload attempt; err is nil when it succeeded.
func (m *Metrics) ConfigReload(at time.Time, err error) {
	if err != nil {
		m.reloads.config.WithLabelValues(ReloadFailure).Inc()
		m.reloads.lastOK.Set(0)
		return
	}
	m.reloads.config.WithLabelValues(ReloadSuccess).Inc()
	m.ConfigLoaded(at)
}

// KeyReloadObserver returns the observer of a key material reloader of
// one kind (reload.Options.Observer): it counts failures.
func (m *Metrics) KeyReloadObserver(kind string) func(source string, err error) {
	c := m.reloads.keyFailures.WithLabelValues(kind)
	return func(_ string, err error) {
		if err != nil {
			c.Inc()
		}
	}
}
