package limit

import (
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wssgw/wssgw/internal/config"
)

// Set is the limits of every route, by route name, and how clients are
// told apart. It outlives a configuration reload: the new gateway gets
// the old gateway's Set after Reconfigure, so buckets keep their tokens,
// requests in flight stay counted, and clients stay remembered.
type Set struct {
	mu      sync.Mutex
	routes  map[string]*Limiter
	clients atomic.Pointer[clientRules]
	now     func() time.Duration
}

// NewSet returns an empty Set; Reconfigure gives it its limits.
func NewSet() *Set {
	epoch := time.Now()
	s := &Set{routes: map[string]*Limiter{}, now: func() time.Duration { return time.Since(epoch) }}
	s.clients.Store(&clientRules{ipv6Bits: 128})
	return s
}

// Reconfigure applies a validated configuration in place. A route keeps
// its state when it keeps its name; a route that lost all its limits, or
// is gone, is forgotten (requests it admitted release into the old state,
// which is harmless). The tables shrink to a lowered clients.maxTracked.
func (s *Set) Reconfigure(cfg *config.Config) {
	s.clients.Store(newClientRules(cfg.Clients))
	s.mu.Lock()
	defer s.mu.Unlock()
	keep := make(map[string]*Limiter, len(cfg.Routes))
	for _, rc := range cfg.Routes {
		if !rc.Limits.Enabled() {
			continue
		}
		l := s.routes[rc.Name]
		if l == nil {
			l = &Limiter{name: rc.Name, now: s.now,
				clients: newTable[netip.Prefix](cfg.Clients.MaxTracked), signers: newTable[Signer](cfg.Clients.MaxTracked)}
		} else {
			l.clients.resize(cfg.Clients.MaxTracked)
			l.signers.resize(cfg.Clients.MaxTracked)
		}
		l.rules.Store(&rules{total: newRule(rc.Limits.Total), client: newRule(rc.Limits.PerClient), signer: newRule(rc.Limits.PerSigner)})
		keep[rc.Name] = l
	}
	s.routes = keep
}

// Route is the limiter of the named route, nil when it has no limits (a
// nil *Limiter admits everything).
func (s *Set) Route(name string) *Limiter {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.routes[name]
}

// Stats reports each route's remembered identities.
func (s *Set) Stats(yield func(route string, st Stats)) {
	s.mu.Lock()
	routes := make(map[string]*Limiter, len(s.routes))
	for name, l := range s.routes {
		routes[name] = l
	}
	s.mu.Unlock()
	for name, l := range routes {
		yield(name, l.Stats())
	}
}
