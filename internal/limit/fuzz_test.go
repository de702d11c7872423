package limit

import (
	"strings"
	"testing"

	"github.com/wssgw/wssgw/internal/config"
)

// FuzzClient: any peer address and X-Forwarded-For value gives a masked
// prefix or the zero one, never a panic; the header is never believed from
// an untrusted peer, and the result is either the peer or an address the
// header holds.
func FuzzClient(f *testing.F) {
	for _, s := range [][2]string{
		{"10.1.1.1:1", "203.0.113.5, 10.2.2.2"},
		{"[2001:db8::1]:443", "2001:db8:7::1,  ,"},
		{"10.1.1.1:1", "junk, ::ffff:1.2.3.4"},
		{"@", ""},
		{"10.0.0.1:0", ",,,"},
	} {
		f.Add(s[0], s[1])
	}
	trusting, plain := NewSet(), NewSet()
	trusting.Reconfigure(&config.Config{Clients: config.Clients{TrustedProxies: []string{"10.0.0.0/8", "2001:db8::/48"}, IPv6PrefixLength: 64, MaxTracked: 1}})
	plain.Reconfigure(&config.Config{Clients: config.DefaultClients()})
	f.Fuzz(func(t *testing.T, remote, xff string) {
		peer := plain.Client(remote, nil)
		if got := plain.Client(remote, []string{xff}); got != peer {
			t.Fatalf("untrusted peer %q: X-Forwarded-For %q changed the client to %s", remote, xff, got)
		}
		p := trusting.Client(remote, []string{xff})
		if !p.IsValid() {
			if peer.IsValid() {
				t.Fatalf("peer %q is valid but the client is not", remote)
			}
			return
		}
		if p != p.Masked() {
			t.Fatalf("%s is not masked", p)
		}
		if p == peer {
			return
		}
		for _, elem := range strings.Split(xff, ",") {
			a, ok := parseForwarded(strings.TrimSpace(elem))
			if ok && trusting.clients.Load().prefix(a) == p {
				return
			}
		}
		t.Fatalf("client %s is neither the peer %q nor in X-Forwarded-For %q", p, remote, xff)
	})
}
