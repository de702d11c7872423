package trust

import (
	"crypto/sha256"
	"crypto/x509"
	"errors"
	"sync"
	"time"
)

// Cache defaults.
const (
	DefaultCacheSize = 10000
	DefaultCacheTTL  = 5 * time.Minute
)

// verifyCache remembers trust decisions. Positive decisions are keyed by the
// leaf's DER bytes and purpose (the chain is re-derivable from configured
// material); negative ones also by the offered intermediates, and only for
// reasons that do not depend on the verification time.
type verifyCache struct {
	mu  sync.RWMutex
	pos [3]map[string]*cacheEntry // by purpose, then leaf DER: lookups do not allocate
	neg map[string]*cacheEntry
	max int
	ttl time.Duration
	now func() time.Time
}

type cacheEntry struct {
	id      *Identity
	err     error
	win     window
	expires time.Time
}

func newVerifyCache(size int, ttl time.Duration, now func() time.Time) *verifyCache {
	if size <= 0 {
		size = DefaultCacheSize
	}
	if ttl <= 0 {
		ttl = DefaultCacheTTL
	}
	c := &verifyCache{neg: map[string]*cacheEntry{}, max: size, ttl: ttl, now: now}
	for i := range c.pos {
		c.pos[i] = map[string]*cacheEntry{}
	}
	return c
}

func negKey(leaf *x509.Certificate, inter []*x509.Certificate, p Purpose) string {
	h := sha256.New()
	for _, c := range inter {
		h.Write(c.Raw)
	}
	return string(rune('0'+p)) + "-" + string(h.Sum(nil)) + string(leaf.Raw)
}

// get returns a cached decision usable at time at.
func (c *verifyCache) get(leaf *x509.Certificate, inter []*x509.Certificate, p Purpose, at time.Time) (*Identity, error, bool) {
	now := c.now()
	if p < PurposeSigning || p > PurposeEncryption {
		return nil, nil, false
	}
	c.mu.RLock()
	e := c.pos[p][string(leaf.Raw)]
	c.mu.RUnlock()
	if e != nil && now.Before(e.expires) && !at.Before(e.win.from) && !at.After(e.win.until) {
		return e.id, nil, true
	}
	c.mu.RLock()
	e = c.neg[negKey(leaf, inter, p)]
	c.mu.RUnlock()
	if e != nil && now.Before(e.expires) {
		return nil, e.err, true
	}
	return nil, nil, false
}

func (c *verifyCache) put(leaf *x509.Certificate, inter []*x509.Certificate, p Purpose, id *Identity, win window, err error) {
	if p < PurposeSigning || p > PurposeEncryption {
		return
	}
	m, key := c.pos[p], string(leaf.Raw)
	switch {
	case err == nil:
	case errors.Is(err, ErrExpired), errors.Is(err, ErrNotYetValid), errors.Is(err, ErrCRL):
		return // depends on the time of the message
	default:
		m, key = c.neg, negKey(leaf, inter, p)
	}
	e := &cacheEntry{id: id, err: err, win: win, expires: c.now().Add(c.ttl)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := m[key]; !ok && c.lenLocked() >= c.max {
		c.evict()
	}
	m[key] = e
}

func (c *verifyCache) lenLocked() int {
	n := len(c.neg)
	for _, m := range c.pos {
		n += len(m)
	}
	return n
}

// evict drops expired entries, then arbitrary ones until a tenth is free.
func (c *verifyCache) evict() {
	now := c.now()
	maps := append([]map[string]*cacheEntry{c.neg}, c.pos[:]...)
	n := 0
	for _, m := range maps {
		for k, e := range m {
			if !now.Before(e.expires) {
				delete(m, k)
				n++
			}
		}
	}
	for _, m := range maps {
		for k := range m {
			if n >= c.max/10+1 {
				return
			}
			delete(m, k)
			n++
		}
	}
}
