package limit

import (
	"net/netip"
	"strings"

	"github.com/wssgw/wssgw/internal/config"
)

// clientRules say how a request's client is told apart.
type clientRules struct {
	trusted  []netip.Prefix
	ipv6Bits int
}

func newClientRules(c config.Clients) *clientRules {
	return &clientRules{trusted: c.Prefixes(), ipv6Bits: c.IPv6PrefixLength}
}

// Client is the identity the perClient limits count for a request from
// remoteAddr (http.Request.RemoteAddr, "ip:port") with these
// X-Forwarded-For header values: the TCP peer, or, when the peer is a
// trusted proxy (clients.trustedProxies), the right-most forwarded address
// that is not one — the left part of the header is whatever the client
// wrote and proves nothing. IPv6 addresses count by their
// clients.ipv6PrefixLength network. A peer address that does not parse
// (not TCP) gives the zero Prefix: all such requests share one bucket.
func (s *Set) Client(remoteAddr string, forwardedFor []string) netip.Prefix {
	c := s.clients.Load()
	ap, err := netip.ParseAddrPort(remoteAddr)
	if err != nil {
		return netip.Prefix{}
	}
	a := ap.Addr().Unmap()
	if len(c.trusted) > 0 && c.trusts(a) {
		a = c.forwarded(a, forwardedFor)
	}
	return c.prefix(a)
}

func (c *clientRules) trusts(a netip.Addr) bool {
	for _, p := range c.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// forwarded walks the X-Forwarded-For addresses from the right (the last
// header's last element is the one the trusted peer appended) past the
// trusted proxies. An element that does not parse ends the walk at the
// last trusted hop: a trusted proxy wrote it, so it is misconfigured, and
// nothing left of it can be believed.
func (c *clientRules) forwarded(peer netip.Addr, values []string) netip.Addr {
	last := peer
	for i := len(values) - 1; i >= 0; i-- {
		v := values[i]
		for v != "" {
			elem := v
			if j := strings.LastIndexByte(v, ','); j >= 0 {
				elem, v = v[j+1:], v[:j]
			} else {
				v = ""
			}
			a, ok := parseForwarded(strings.TrimSpace(elem))
			if !ok {
				return last
			}
			if !c.trusts(a) {
				return a
			}
			last = a
		}
	}
	return last
}

// parseForwarded reads one X-Forwarded-For element: an address, or an
// address with a port as some load balancers write it (1.2.3.4:5678,
// [2001:db8::1]:5678).
func parseForwarded(s string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(s)
	if err != nil {
		ap, perr := netip.ParseAddrPort(s)
		if perr != nil {
			return netip.Addr{}, false
		}
		a = ap.Addr()
	}
	return a.Unmap(), true
}

// prefix is the network a client address counts as.
func (c *clientRules) prefix(a netip.Addr) netip.Prefix {
	bits := a.BitLen()
	if a.Is6() {
		bits = c.ipv6Bits
	}
	p, err := a.Prefix(bits)
	if err != nil {
		return netip.Prefix{}
	}
	return p
}
