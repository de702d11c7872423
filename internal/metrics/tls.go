package metrics

import "github.com/prometheus/client_golang/prometheus"

// NameTLSHandshakeFailures counts failed TLS handshakes on wssgw's own
// listeners.
const NameTLSHandshakeFailures = Namespace + "_tls_handshake_failures_total"

// LabelListener names one of wssgw's listeners: ListenerData or
// ListenerAdmin.
const LabelListener = "listener"

// Listeners, the values of the listener label.
const (
	ListenerData  = "data"
	ListenerAdmin = "admin"
)

// Values of the reason label of TLS handshake failures: a closed set.
const (
	TLSNoCertificate  = "no_certificate"  // client certificates are required and the client sent none
	TLSBadCertificate = "bad_certificate" // a certificate failed verification (untrusted, expired, wrong use), or the client rejected ours
	TLSProtocol       = "protocol"        // not TLS (plain HTTP included), or no common version, cipher suite or ALPN protocol
	TLSOther          = "other"           // the client went away or timed out mid-handshake, or anything else
)

// TLSHandshakeReasons lists every reason, for tests and pre-initialized
// series.
func TLSHandshakeReasons() []string {
	return []string{TLSNoCertificate, TLSBadCertificate, TLSProtocol, TLSOther}
}

func newTLSHandshakeFailures() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: NameTLSHandshakeFailures,
		Help: "Failed TLS handshakes on wssgw's listeners, by listener and reason.",
	}, []string{LabelListener, LabelReason})
}

// WatchTLSListener creates a TLS listener's failure series at zero, so
// that rate() and alerts work before the first failure.
func (m *Metrics) WatchTLSListener(listener string) {
	for _, r := range TLSHandshakeReasons() {
		m.tlsFailures.WithLabelValues(listener, r)
	}
}

// TLSHandshakeFailure counts a failed handshake. A reason outside the
// closed set is counted as TLSOther.
func (m *Metrics) TLSHandshakeFailure(listener, reason string) {
	switch reason {
	case TLSNoCertificate, TLSBadCertificate, TLSProtocol:
	default:
		reason = TLSOther
	}
	m.tlsFailures.WithLabelValues(listener, reason).Inc()
}
