package dom

import (
	"crypto/x509"
	"sync"
	"sync/atomic"

	"github.com/wssgw/wssgw/internal/trust"
)

// certKeysMax bounds the certificates whose lookup values an engine
// keeps. Only the configuration's certificates are kept (decryption
// certificates, trust index entries), never a message's, so the bound is
// only reached across many key and trust reloads, each of which brings
// new certificates; the map is then emptied and refills as they are used.
const certKeysMax = 1024

// certKeysCache keeps, per configured certificate, the values token
// references are compared with (trust.CertKeys), so that the issuer DN,
// SKI and thumbprint of the policy's decryption certificates are
// computed once per loaded certificate rather than once per encrypted
// message (issue 14: they cost about 3 % of a 4 KiB encrypted message).
// Keyed by the certificate's pointer: a reload (internal/reload) loads new
// certificates rather than changing the old ones, so an entry never goes
// stale. Lookups do not lock.
type certKeysCache struct {
	m sync.Map // *x509.Certificate → *trust.CertKeys
	n atomic.Int64
}

// certKeys returns the lookup values of c, a certificate of the
// configuration.
func (e *Engine) certKeys(c *x509.Certificate) *trust.CertKeys {
	cc := &e.certs
	if k, ok := cc.m.Load(c); ok {
		return k.(*trust.CertKeys)
	}
	if cc.n.Add(1) > certKeysMax {
		cc.m.Clear()
		cc.n.Store(1)
	}
	k, _ := cc.m.LoadOrStore(c, trust.NewCertKeys(c))
	return k.(*trust.CertKeys)
}
