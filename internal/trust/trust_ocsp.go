package trust

import (
	"bytes"
	"crypto/x509"
)

// The trust store's side of OCSP: it tells the checker which certificates
// to keep fresh and asks it, after the chain and CRL checks, about the leaf.
// Only leaves are checked by OCSP; CA revocation stays with crlFiles.

// watchKnownOCSP registers the pinned and known certificates at load, so
// their responses are fetched before their first message.
func (s *Store) watchKnownOCSP() {
	if s.opts.OCSP == nil {
		return
	}
	for _, c := range s.index.thumb { // every pinned and known certificate, once
		s.opts.OCSP.Watch(c, s.issuerOf(c), true)
	}
}

// watchOCSP registers a verified chain's leaf with its issuer: the chain's
// next certificate, or for a pinned leaf one of the configured CAs.
func (s *Store) watchOCSP(chain []*x509.Certificate) {
	if s.opts.OCSP == nil {
		return
	}
	issuer := (*x509.Certificate)(nil)
	if len(chain) > 1 {
		issuer = chain[1]
	} else {
		issuer = s.issuerOf(chain[0])
	}
	s.opts.OCSP.Watch(chain[0], issuer, false)
}

// checkOCSP asks the checker about leaf. A leaf it does not watch (its
// positive decision came from the verification cache after the checker
// evicted it) is registered again, so it is fetched for the next message.
func (s *Store) checkOCSP(leaf *x509.Certificate) error {
	c := s.opts.OCSP
	if c == nil {
		return nil
	}
	if watched, err := c.check(leaf); watched {
		return err
	}
	c.Watch(leaf, s.issuerOf(leaf), false)
	return c.Check(leaf)
}

// issuerOf finds c's issuer among the loaded certificates, nil if none.
func (s *Store) issuerOf(c *x509.Certificate) *x509.Certificate {
	for _, is := range s.loaded {
		if bytes.Equal(is.RawSubject, c.RawIssuer) && c.CheckSignatureFrom(is) == nil {
			return is
		}
	}
	return nil
}
