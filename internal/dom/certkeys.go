package dom

import (
	"crypto/x509"
	"sync"
	"sync/atomic"

	"github.com/wssgw/wssgw/internal/trust"
)

// certKeysMax bounds the configuration's certificates whose lookup values
// an engine keeps (Engine.certs: decryption certificates, trust index
// entries). Only the configuration's are kept there, so the bound is only
// reached across many key and trust reloads, each of which brings new
// certificates; the map is then emptied and refills as they are used.
const certKeysMax = 1024

// certKeysCache keeps, per certificate, the values token references are
// compared with (trust.CertKeys), so that the issuer DN, SKI and
// thumbprint of the policy's decryption certificates are computed once
// per loaded certificate rather than once per encrypted message (issue
// 14: they cost about 3 % of a 4 KiB encrypted message). Keyed by the
// certificate's pointer: a reload (internal/reload) loads new
// certificates rather than changing the old ones, and tokenCache hands
// out one pointer per certificate text, so an entry never goes stale.
// Lookups do not lock. A map that would grow past limit (certKeysMax
// when zero) is emptied first.
type certKeysCache struct {
	m     sync.Map // *x509.Certificate → *trust.CertKeys
	n     atomic.Int64
	limit int64
}

// get returns the lookup values of c.
func (cc *certKeysCache) get(c *x509.Certificate) *trust.CertKeys {
	if k, ok := cc.m.Load(c); ok {
		return k.(*trust.CertKeys)
	}
	limit := cc.limit
	if limit == 0 {
		limit = certKeysMax
	}
	if cc.n.Add(1) > limit {
		cc.m.Clear()
		cc.n.Store(1)
	}
	k, _ := cc.m.LoadOrStore(c, trust.NewCertKeys(c))
	return k.(*trust.CertKeys)
}

// certKeys returns the lookup values of c, a certificate of the
// configuration.
func (e *Engine) certKeys(c *x509.Certificate) *trust.CertKeys { return e.certs.get(c) }
