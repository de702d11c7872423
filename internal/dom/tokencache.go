package dom

import (
	"crypto/x509"
	"sync"

	"github.com/wssgw/wssgw/internal/trust"
)

// tokenCacheMax bounds each map of a tokenCache; a map that would grow
// past it is emptied first, so a sender of endless distinct tokens costs
// parses, never memory.
const tokenCacheMax = 256

// tokenCache remembers, across messages, the two steps of key resolution
// that are pure functions of their input and cost as much as a tenth of a
// fresh-shape message (issue 14: fresh shapes always take the DOM
// engine): parsing a BinarySecurityToken's certificates (keyed by its
// ValueType and exact base64 text) and finding the certificate an
// X509IssuerSerial names in a trust index (keyed by the index, which a
// trust reload replaces rather than changes, and the reference's exact
// values). Trust itself is never cached here: every message's leaf still
// goes through trust.Store.Verify at the message's time. The certificates
// are shared read-only, as the trust store shares its own.
type tokenCache struct {
	mu      sync.Mutex
	tokens  map[string][]*x509.Certificate
	leaves  map[leafKey]*x509.Certificate
	issuers map[string]issuerName
	key     []byte // scratch for tokens' keys, under mu
}

// issuerName is an X509IssuerName parsed (trust.ParseIssuerName), or
// that it does not parse (ok false).
type issuerName struct {
	name trust.IssuerName
	ok   bool
}

// issuerCacheMaxText bounds the X509IssuerName an entry keeps: real ones
// are a few hundred bytes; a longer one is parsed each time.
const issuerCacheMaxText = 1 << 10

// issuer returns X509IssuerName s parsed, and whether it parses. A
// partner's stack sends the same issuer in every message, so parsing and
// canonicalizing it (two thirds of finding the decryption key an
// X509IssuerSerial names, issue 14) is done once per name, not per
// message.
func (c *tokenCache) issuer(s string) (trust.IssuerName, bool) {
	c.mu.Lock()
	v, hit := c.issuers[s]
	c.mu.Unlock()
	if hit {
		return v.name, v.ok
	}
	n, err := trust.ParseIssuerName(s)
	v = issuerName{name: n, ok: err == nil}
	if len(s) > issuerCacheMaxText {
		return v.name, v.ok
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.issuers == nil || len(c.issuers) >= tokenCacheMax {
		c.issuers = make(map[string]issuerName)
	}
	c.issuers[s] = v
	return v.name, v.ok
}

// leafKey names an X509IssuerSerial lookup in one trust index.
type leafKey struct {
	ix             *trust.Index
	issuer, serial string
}

// token returns the certificates parsed before from a BinarySecurityToken
// of value type vt and base64 text b64.
func (c *tokenCache) token(vt string, b64 []byte) ([]*x509.Certificate, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.key = append(append(append(c.key[:0], vt...), 0), b64...)
	certs, ok := c.tokens[string(c.key)]
	return certs, ok
}

// tokenCacheMaxText bounds the token text an entry keeps: a certificate
// or a short PKIPath is a few KiB of base64; a larger token is parsed each
// time rather than held, so the cache holds at most tokenCacheMax × this
// whatever tokens senders make up.
const tokenCacheMaxText = 16 << 10

// putToken records what token returns for vt and b64.
func (c *tokenCache) putToken(vt string, b64 []byte, certs []*x509.Certificate) {
	if len(b64) > tokenCacheMaxText {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tokens == nil || len(c.tokens) >= tokenCacheMax {
		c.tokens = make(map[string][]*x509.Certificate)
	}
	c.tokens[vt+"\x00"+string(b64)] = certs
}

// leaf returns the certificate found before for k.
func (c *tokenCache) leaf(k leafKey) (*x509.Certificate, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cert, ok := c.leaves[k]
	return cert, ok
}

// putLeaf records the certificate found for k.
func (c *tokenCache) putLeaf(k leafKey, cert *x509.Certificate) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.leaves == nil || len(c.leaves) >= tokenCacheMax {
		c.leaves = make(map[leafKey]*x509.Certificate)
	}
	c.leaves[k] = cert
}
