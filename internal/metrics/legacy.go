package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// newLegacyAlgorithms is the counter of messages that used a legacy
// algorithm. wssgw_security_algorithm_uses_total says which policies see
// SHA-1 or CBC; this one says which partner certificate sent it, so an
// operator knows whom to ask to migrate before the policy drops it.
func newLegacyAlgorithms() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: NameLegacyAlgorithms,
		Help: "Messages that used a legacy algorithm (SHA-1 digests and signatures, RSA-1.5 key transport, CBC " +
			"data encryption, RSA keys under 2048 bits), by policy, algorithm and the verified signer's subject " +
			"(none: no certificate signer; other: past the per-policy bound on distinct signers).",
	}, []string{LabelPolicy, LabelAlg, LabelSigner})
}

// legacySigners bounds the distinct signer label values of one policy.
type legacySigners struct {
	mu   sync.Mutex
	seen map[string]bool
}

// signersOf is the bound of a policy's signers. It outlives a reload (a
// new PolicyMetrics for the same policy), as do the series it bounds.
func (m *Metrics) signersOf(policy string) *legacySigners {
	l, _ := m.signers.LoadOrStore(policy, &legacySigners{seen: map[string]bool{}})
	return l.(*legacySigners)
}

// label is the signer's label value: the subject itself while the policy
// has seen fewer than MaxLegacySigners, else SignerOther.
func (l *legacySigners) label(subject string) string {
	if subject == "" {
		return SignerNone
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen[subject] {
		return subject
	}
	if len(l.seen) >= MaxLegacySigners {
		return SignerOther
	}
	l.seen[subject] = true
	return subject
}

// InitLegacy creates the policy's legacy algorithm series of signer
// "none" at zero for the given algorithm labels, so that the family is
// exported from start-up.
func (pm *PolicyMetrics) InitLegacy(algorithms ...string) {
	for _, a := range algorithms {
		pm.legacy.WithLabelValues(pm.name, a, SignerNone)
	}
}

// Legacy counts one message that used the legacy algorithm (a closed-set
// label) and was signed by signer, the verified certificate's subject ("" for
// none). Signers are bounded by the trust store and by MaxLegacySigners.
func (pm *PolicyMetrics) Legacy(algorithm, signer string) {
	pm.legacy.WithLabelValues(pm.name, algorithm, pm.signers.label(signer)).Inc()
}
