package config

import (
	"fmt"
	"math"
	"net/netip"
)

// RouteLimits are a route's rate and concurrency limits (issue 16): so that
// no client, and no partner, can make the gateway do DOM-path and RSA work
// at will or use up another's share of it. A zero Limit limits nothing.
type RouteLimits struct {
	// Total bounds the route as a whole, before the body is read.
	Total Limit `mapstructure:"total"`
	// PerClient bounds each client address (clients.*) before the body is
	// read: it is what bounds verification work, since no identity is
	// known yet.
	PerClient Limit `mapstructure:"perClient"`
	// PerSigner bounds each verified signer (certificate thumbprint, else
	// UsernameToken username) after verification, before forwarding: one
	// partner's share of the backend, whatever addresses it sends from.
	PerSigner Limit `mapstructure:"perSigner"`
}

// Enabled reports whether any limit of the route is set.
func (l RouteLimits) Enabled() bool { return l != RouteLimits{} }

// Limit is a token bucket (Rate per second, up to Burst at once) and a
// bound on requests in flight. Zero fields limit nothing.
type Limit struct {
	// Rate is the sustained requests per second; 0 means no rate limit.
	// Fractions are fine: 0.5 is one request every two seconds.
	Rate float64 `mapstructure:"rate"`
	// Burst is how many requests may come at once after a quiet spell; 0
	// means one second's worth of Rate (at least 1).
	Burst int `mapstructure:"burst"`
	// MaxConcurrent bounds the requests in flight; 0 means no bound.
	MaxConcurrent int `mapstructure:"maxConcurrent"`
}

// EffectiveBurst is Burst, or one second's worth of Rate when Burst is 0.
func (l Limit) EffectiveBurst() int {
	if l.Burst > 0 {
		return l.Burst
	}
	return max(1, int(math.Ceil(l.Rate)))
}

// Clients says how the per-client limits (routes[].limits.perClient) tell
// clients apart and how many they remember.
type Clients struct {
	// TrustedProxies are the CIDRs of load balancers or proxies in front of
	// wssgw whose X-Forwarded-For header is believed: for a request whose
	// TCP peer is one of them, the client is the right-most address of the
	// header that is not. Empty (the default): the client is the TCP peer.
	TrustedProxies []string `mapstructure:"trustedProxies"`
	// IPv6PrefixLength groups IPv6 clients by network: one host usually
	// holds a whole /64, so a per-address limit on /128 is no limit.
	// Default 64; 128 counts each address apart.
	IPv6PrefixLength int `mapstructure:"ipv6PrefixLength"`
	// MaxTracked bounds the clients (and the signers) remembered per route;
	// beyond it the least recently seen is forgotten, so a spray of source
	// addresses cannot grow memory. Default 10000 (about 1.5 MiB per route
	// and scope).
	MaxTracked int `mapstructure:"maxTracked"`
}

// DefaultClients are the client-identity defaults.
func DefaultClients() Clients {
	return Clients{TrustedProxies: []string{}, IPv6PrefixLength: 64, MaxTracked: 10_000}
}

// Prefixes parses TrustedProxies; Validate has checked them, so an entry
// that does not parse is skipped.
func (c Clients) Prefixes() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range c.TrustedProxies {
		if p, err := parseCIDR(s); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// parseCIDR accepts a CIDR or a single address (its host prefix).
func parseCIDR(s string) (netip.Prefix, error) {
	if a, err := netip.ParseAddr(s); err == nil {
		a = a.Unmap()
		return netip.PrefixFrom(a, a.BitLen()), nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return p, err
	}
	if p.Addr().Is4In6() {
		p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
	}
	return p.Masked(), nil
}

func (c Clients) validate(ps *Problems, key string) {
	for i, s := range c.TrustedProxies {
		p, err := parseCIDR(s)
		switch {
		case err != nil:
			ps.add(fmt.Sprintf("%s.trustedProxies[%d]", key, i), "must be a CIDR such as 10.0.0.0/8 or an IP address, got %q", s)
		case p.Bits() == 0:
			// Trusting every peer lets any client choose its identity.
			ps.add(fmt.Sprintf("%s.trustedProxies[%d]", key, i), "must not trust every address, got %q", s)
		}
	}
	if c.IPv6PrefixLength < 32 || c.IPv6PrefixLength > 128 {
		ps.add(key+".ipv6PrefixLength", "must be from 32 to 128, got %d", c.IPv6PrefixLength)
	}
	if c.MaxTracked < 1 {
		ps.add(key+".maxTracked", "must be at least 1, got %d", c.MaxTracked)
	}
}

func (l RouteLimits) validate(ps *Problems, key string, policy string) {
	l.Total.validate(ps, key+".total")
	l.PerClient.validate(ps, key+".perClient")
	l.PerSigner.validate(ps, key+".perSigner")
	if l.PerSigner != (Limit{}) && policy == PolicyNone {
		// Nothing is verified on such a route, so there is no signer to
		// limit: the option would silently do nothing.
		ps.add(key+".perSigner", "needs a route policy that verifies a signer or a UsernameToken, got policy %q", policy)
	}
}

func (l Limit) validate(ps *Problems, key string) {
	if l.Rate < 0 || math.IsNaN(l.Rate) || math.IsInf(l.Rate, 0) {
		ps.add(key+".rate", "must be a non-negative number of requests per second, got %v", l.Rate)
	}
	if l.Burst < 0 {
		ps.add(key+".burst", "must not be negative, got %d", l.Burst)
	}
	if l.Burst > 0 && l.Rate == 0 {
		ps.add(key+".burst", "is set (%d) but rate is not: a burst without a rate limits nothing", l.Burst)
	}
	if l.MaxConcurrent < 0 {
		ps.add(key+".maxConcurrent", "must not be negative, got %d", l.MaxConcurrent)
	}
}
