package metrics

import (
	"crypto/x509"
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Certificate uses, the values of the use label.
const (
	UseTLS        = "tls"
	UseTrust      = "trust"
	UseDecryption = "decryption"
	UseSigning    = "signing"
)

// CertificateSource lists the certificates a component holds now, by use.
// It is called at scrape time, so rotated Secrets show up without any
// bookkeeping and replaced certificates disappear.
type CertificateSource func(yield func(use string, c *x509.Certificate))

// certificates is a collector of wssgw_certificate_expiry_timestamp_seconds.
type certificates struct {
	desc    *prometheus.Desc
	mu      sync.Mutex
	sources []*CertificateSource // by pointer, so that one can be removed
}

func newCertificates() *certificates {
	return &certificates{desc: prometheus.NewDesc(NameCertificateExpiry,
		"NotAfter of each loaded certificate as a Unix time, by use (tls, trust, decryption, signing) and subject.",
		[]string{LabelUse, LabelSubject}, nil)}
}

func (c *certificates) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *certificates) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	sources := append([]*CertificateSource(nil), c.sources...)
	c.mu.Unlock()
	seen := map[[2]string]bool{}
	for _, src := range sources {
		(*src)(func(use string, cert *x509.Certificate) {
			k := [2]string{use, cert.Subject.String()}
			if seen[k] {
				return // the same subject twice (a renewed copy): the first wins
			}
			seen[k] = true
			ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(cert.NotAfter.Unix()), k[0], k[1])
		})
	}
}

// WatchCertificates adds a source of certificates whose expiry is exported.
// The returned function removes it: a configuration reload replaces the
// gateway's sources, and certificates no longer used must not stay
// exported (nor their holders reachable).
func (m *Metrics) WatchCertificates(src CertificateSource) (unwatch func()) {
	p := &src
	m.certs.mu.Lock()
	m.certs.sources = append(m.certs.sources, p)
	m.certs.mu.Unlock()
	return func() {
		m.certs.mu.Lock()
		defer m.certs.mu.Unlock()
		m.certs.sources = slices.DeleteFunc(m.certs.sources, func(s *CertificateSource) bool { return s == p })
	}
}
