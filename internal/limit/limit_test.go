package limit

import (
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
)

// clock is a manual clock for a Set.
type clock struct{ t time.Duration }

func (c *clock) now() time.Duration { return c.t }

// newTestSet is a Set with a manual clock for one route "r" with limits.
func newTestSet(t *testing.T, l config.RouteLimits, clients config.Clients) (*Set, *Limiter, *clock) {
	t.Helper()
	c := &clock{t: time.Hour}
	s := NewSet()
	s.now = c.now
	s.Reconfigure(&config.Config{Clients: clients, Routes: []config.Route{{Name: "r", Limits: l}}})
	lim := s.Route("r")
	if !l.Enabled() {
		require.Nil(t, lim, "a route without limits has no limiter")
	} else {
		require.NotNil(t, lim)
	}
	return s, lim, c
}

func prefix(s string) netip.Prefix { return netip.MustParsePrefix(s) }

func refusal(t *testing.T, err error) *Refusal {
	t.Helper()
	var r *Refusal
	require.True(t, errors.As(err, &r), "want a *Refusal, got %v", err)
	return r
}

func TestLimits(t *testing.T) {
	a, b := prefix("192.0.2.1/32"), prefix("192.0.2.2/32")
	tests := map[string]struct {
		limits config.RouteLimits
		// run admits requests and says what the last one got.
		run       func(l *Limiter, c *clock) error
		wantScope Scope
		wantKind  Kind
		wantRetry time.Duration
	}{
		"ok/no limits admit everything": {
			limits: config.RouteLimits{},
			run: func(l *Limiter, _ *clock) error {
				var err error
				for range 1000 {
					var tk Ticket
					err = l.Admit(&tk, a)
				}
				return err
			},
		},
		"ok/burst then refill": {
			limits: config.RouteLimits{PerClient: config.Limit{Rate: 2, Burst: 3}},
			run: func(l *Limiter, c *clock) error {
				for range 3 {
					var tk Ticket
					if err := l.Admit(&tk, a); err != nil {
						return err
					}
					tk.Release()
				}
				c.t += 500 * time.Millisecond // one token at 2/s
				var tk Ticket
				return l.Admit(&tk, a)
			},
		},
		"ok/other client keeps its share": {
			limits: config.RouteLimits{PerClient: config.Limit{Rate: 1, Burst: 1}},
			run: func(l *Limiter, _ *clock) error {
				var t1, t2 Ticket
				_ = l.Admit(&t1, a)
				_ = l.Admit(&t2, a) // refused
				var tk Ticket
				return l.Admit(&tk, b)
			},
		},
		"ok/other signer keeps its share": {
			limits: config.RouteLimits{PerSigner: config.Limit{Rate: 1}},
			run: func(l *Limiter, _ *clock) error {
				var t1, t2, t3 Ticket
				_ = l.AdmitSigner(&t1, Signer{Thumbprint: "aa"})
				_ = l.AdmitSigner(&t2, Signer{Thumbprint: "aa"})
				// A username equal to a thumbprint is another identity.
				return l.AdmitSigner(&t3, Signer{Username: "aa"})
			},
		},
		"ok/no identity is not counted by signer": {
			limits: config.RouteLimits{PerSigner: config.Limit{Rate: 1}},
			run: func(l *Limiter, _ *clock) error {
				var err error
				for range 5 {
					var tk Ticket
					err = l.AdmitSigner(&tk, Signer{})
				}
				return err
			},
		},
		"ok/released concurrency is free again": {
			limits: config.RouteLimits{PerClient: config.Limit{MaxConcurrent: 1}, Total: config.Limit{MaxConcurrent: 1}},
			run: func(l *Limiter, _ *clock) error {
				var t1 Ticket
				if err := l.Admit(&t1, a); err != nil {
					return err
				}
				t1.Release()
				t1.Release() // twice is harmless
				var t2 Ticket
				return l.Admit(&t2, a)
			},
		},
		"fail/client over rate": {
			limits: config.RouteLimits{PerClient: config.Limit{Rate: 4, Burst: 2}},
			run: func(l *Limiter, _ *clock) error {
				var err error
				for range 3 {
					var tk Ticket
					err = l.Admit(&tk, a)
				}
				return err
			},
			wantScope: ScopeClient, wantKind: KindRate, wantRetry: 250 * time.Millisecond,
		},
		"fail/client over concurrency": {
			limits: config.RouteLimits{PerClient: config.Limit{MaxConcurrent: 2}},
			run: func(l *Limiter, _ *clock) error {
				var t1, t2, t3 Ticket
				_, _ = l.Admit(&t1, a), l.Admit(&t2, a)
				return l.Admit(&t3, a)
			},
			wantScope: ScopeClient, wantKind: KindConcurrency, wantRetry: time.Second,
		},
		"fail/route over rate for every client": {
			limits: config.RouteLimits{Total: config.Limit{Rate: 1, Burst: 1}},
			run: func(l *Limiter, _ *clock) error {
				var t1, t2 Ticket
				_ = l.Admit(&t1, a)
				return l.Admit(&t2, b)
			},
			wantScope: ScopeRoute, wantKind: KindRate, wantRetry: time.Second,
		},
		"fail/route over concurrency": {
			limits: config.RouteLimits{Total: config.Limit{MaxConcurrent: 1}},
			run: func(l *Limiter, _ *clock) error {
				var t1, t2 Ticket
				_ = l.Admit(&t1, a)
				return l.Admit(&t2, b)
			},
			wantScope: ScopeRoute, wantKind: KindConcurrency, wantRetry: time.Second,
		},
		"fail/signer over rate": {
			limits: config.RouteLimits{PerSigner: config.Limit{Rate: 0.5}},
			run: func(l *Limiter, _ *clock) error {
				var t1, t2 Ticket
				_ = l.AdmitSigner(&t1, Signer{Thumbprint: "aa"})
				return l.AdmitSigner(&t2, Signer{Thumbprint: "aa"})
			},
			wantScope: ScopeSigner, wantKind: KindRate, wantRetry: 2 * time.Second,
		},
		"fail/signer over concurrency": {
			limits: config.RouteLimits{PerSigner: config.Limit{MaxConcurrent: 1}},
			run: func(l *Limiter, _ *clock) error {
				var t1, t2 Ticket
				_ = l.AdmitSigner(&t1, Signer{Username: "alice"})
				return l.AdmitSigner(&t2, Signer{Username: "alice"})
			},
			wantScope: ScopeSigner, wantKind: KindConcurrency, wantRetry: time.Second,
		},
		"fail/refused client is not refilled by waiting too little": {
			limits: config.RouteLimits{PerClient: config.Limit{Rate: 1, Burst: 1}},
			run: func(l *Limiter, c *clock) error {
				var t1, t2 Ticket
				_ = l.Admit(&t1, a)
				c.t += 900 * time.Millisecond
				return l.Admit(&t2, a)
			},
			wantScope: ScopeClient, wantKind: KindRate, wantRetry: 100 * time.Millisecond,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, l, c := newTestSet(t, tc.limits, config.DefaultClients())
			err := tc.run(l, c)
			if tc.wantKind == 0 {
				require.NoError(t, err)
				return
			}
			r := refusal(t, err)
			assert.Equal(t, tc.wantScope, r.Scope)
			assert.Equal(t, tc.wantKind, r.Kind)
			assert.InDelta(t, tc.wantRetry.Seconds(), r.RetryAfter.Seconds(), 0.001)
			assert.Equal(t, "r", r.Route)
		})
	}
}

// A refusal by the route limit gives the client its token back: being
// refused for the route's sake must not cost the client its own share.
func TestRouteRefusalRefundsClient(t *testing.T) {
	_, l, _ := newTestSet(t, config.RouteLimits{
		Total:     config.Limit{MaxConcurrent: 1},
		PerClient: config.Limit{Rate: 1, Burst: 1, MaxConcurrent: 1},
	}, config.DefaultClients())
	a, b := prefix("192.0.2.1/32"), prefix("192.0.2.2/32")
	var held Ticket
	require.NoError(t, l.Admit(&held, a))
	var tb Ticket
	r := refusal(t, l.Admit(&tb, b))
	assert.Equal(t, ScopeRoute, r.Scope)
	assert.Equal(t, "192.0.2.2/32", r.Client, "a route refusal names the client it refused")
	held.Release()
	// b's one token and its concurrency place are intact.
	require.NoError(t, l.Admit(&tb, b))
}

func TestRefusalError(t *testing.T) {
	r := &Refusal{Route: "orders", Scope: ScopeSigner, Kind: KindRate, Client: "sha256:ab", Limit: 2.5}
	assert.Equal(t, "limit: route orders: signer rate limit of 2.5 requests/s reached by sha256:ab", r.Error())
	r = &Refusal{Route: "orders", Scope: ScopeRoute, Kind: KindConcurrency, Client: "192.0.2.1/32", Limit: 8}
	assert.Equal(t, "limit: route orders: route concurrency limit of 8 requests in flight reached by 192.0.2.1/32", r.Error())
}

// A spray of source addresses keeps the table at maxTracked entries, and
// a client seen recently is not the one forgotten.
func TestSprayIsBounded(t *testing.T) {
	_, l, _ := newTestSet(t, config.RouteLimits{PerClient: config.Limit{Rate: 1, Burst: 1}},
		config.Clients{IPv6PrefixLength: 64, MaxTracked: 100})
	victim := prefix("198.51.100.7/32")
	var tv Ticket
	require.NoError(t, l.Admit(&tv, victim))
	for i := range 10_000 {
		var tk Ticket
		p := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), 32)
		require.NoError(t, l.Admit(&tk, p))
		if i%50 == 0 {
			// The victim keeps sending (and being refused): it stays recent.
			var again Ticket
			_ = l.Admit(&again, victim)
		}
	}
	st := l.Stats()
	assert.Equal(t, 100, st.Clients)
	assert.Equal(t, uint64(10_000+1-100), st.ClientsEvicted)
	var again Ticket
	refusal(t, l.Admit(&again, victim)) // still remembered: still empty
}

// Reconfigure keeps state of a route that keeps its name, applies new
// rules to it, and forgets a route without limits.
func TestReconfigureKeepsState(t *testing.T) {
	s, l, c := newTestSet(t, config.RouteLimits{PerClient: config.Limit{Rate: 1, Burst: 1, MaxConcurrent: 5}}, config.DefaultClients())
	a := prefix("192.0.2.1/32")
	var held Ticket
	require.NoError(t, l.Admit(&held, a))

	cfg := &config.Config{Clients: config.DefaultClients(), Routes: []config.Route{
		{Name: "r", Limits: config.RouteLimits{PerClient: config.Limit{Rate: 1, Burst: 1, MaxConcurrent: 1}}},
		{Name: "open"},
	}}
	s.Reconfigure(cfg)
	require.Same(t, l, s.Route("r"), "the route's limiter is carried over")
	assert.Nil(t, s.Route("open"))
	c.t += 5 * time.Second // a token is due, but the held request counts against the new bound
	var tk Ticket
	r := refusal(t, l.Admit(&tk, a))
	assert.Equal(t, KindConcurrency, r.Kind)
	held.Release()
	require.NoError(t, l.Admit(&tk, a))

	// Lowering maxTracked forgets clients.
	for i := range 50 {
		var t2 Ticket
		_ = l.Admit(&t2, netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 0, 0, byte(i)}), 32))
		t2.Release()
	}
	cfg.Clients.MaxTracked = 10
	s.Reconfigure(cfg)
	assert.Equal(t, 10, l.Stats().Clients)

	cfg.Routes[0].Limits = config.RouteLimits{}
	s.Reconfigure(cfg)
	assert.Nil(t, s.Route("r"))
}

func TestClient(t *testing.T) {
	trusted := config.Clients{IPv6PrefixLength: 64, MaxTracked: 10, TrustedProxies: []string{"10.0.0.0/8", "2001:db8:ffff::/48"}}
	tests := map[string]struct {
		clients config.Clients
		remote  string
		xff     []string
		want    string
	}{
		"ok/peer v4":                                 {config.DefaultClients(), "192.0.2.1:1234", nil, "192.0.2.1/32"},
		"ok/peer v6 by /64":                          {config.DefaultClients(), "[2001:db8:1:2:3:4:5:6]:443", nil, "2001:db8:1:2::/64"},
		"ok/peer v4-mapped":                          {config.DefaultClients(), "[::ffff:192.0.2.9]:1", nil, "192.0.2.9/32"},
		"ok/xff ignored by default":                  {config.DefaultClients(), "10.1.1.1:1", []string{"203.0.113.5"}, "10.1.1.1/32"},
		"ok/xff from trusted proxy":                  {trusted, "10.1.1.1:1", []string{"203.0.113.5"}, "203.0.113.5/32"},
		"ok/xff right-most untrusted":                {trusted, "10.1.1.1:1", []string{"1.1.1.1, 203.0.113.5, 10.2.2.2"}, "203.0.113.5/32"},
		"ok/xff several headers":                     {trusted, "10.1.1.1:1", []string{"203.0.113.5", "10.2.2.2 ,10.3.3.3"}, "203.0.113.5/32"},
		"ok/xff v6 through v6 proxy":                 {trusted, "[2001:db8:ffff::1]:1", []string{"2001:db8:7::1"}, "2001:db8:7::/64"},
		"ok/xff from untrusted peer":                 {trusted, "192.0.2.1:1", []string{"203.0.113.5"}, "192.0.2.1/32"},
		"ok/xff all trusted":                         {trusted, "10.1.1.1:1", []string{"10.2.2.2"}, "10.2.2.2/32"},
		"ok/xff absent":                              {trusted, "10.1.1.1:1", nil, "10.1.1.1/32"},
		"fail/xff garbage stops at last trusted hop": {trusted, "10.1.1.1:1", []string{"203.0.113.5, junk, 10.2.2.2"}, "10.2.2.2/32"},
		"ok/xff with ports":                          {trusted, "10.1.1.1:1", []string{"203.0.113.5:80, 10.2.2.2:443"}, "203.0.113.5/32"},
		"ok/xff v6 with port":                        {trusted, "10.1.1.1:1", []string{"[2001:db8:9::1]:80"}, "2001:db8:9::/64"},
		"fail/xff bracket without port":              {trusted, "10.1.1.1:1", []string{"[203.0.113.5]"}, "10.1.1.1/32"},
		"fail/peer not ip:port":                      {config.DefaultClients(), "@", nil, "invalid Prefix"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := NewSet()
			s.Reconfigure(&config.Config{Clients: tc.clients})
			assert.Equal(t, tc.want, s.Client(tc.remote, tc.xff).String())
		})
	}
}

// Concurrent admits and releases keep the counts exact (run with -race).
func TestConcurrentAdmit(t *testing.T) {
	_, l, _ := newTestSet(t, config.RouteLimits{
		Total:     config.Limit{MaxConcurrent: 1000},
		PerClient: config.Limit{MaxConcurrent: 1000},
		PerSigner: config.Limit{MaxConcurrent: 1000},
	}, config.Clients{IPv6PrefixLength: 64, MaxTracked: 4})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				var tk Ticket
				p := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 0, byte(g), byte(i % 7)}), 32)
				if l.Admit(&tk, p) == nil {
					_ = l.AdmitSigner(&tk, Signer{Username: fmt.Sprint(i % 3)})
				}
				tk.Release()
			}
		})
	}
	wg.Wait()
	l.total.mu.Lock()
	defer l.total.mu.Unlock()
	assert.Equal(t, 0, l.total.active)
}

// BenchmarkAdmit is the hot path for a known client and signer: it must
// not allocate.
func BenchmarkAdmit(b *testing.B) {
	s := NewSet()
	s.Reconfigure(&config.Config{Clients: config.DefaultClients(), Routes: []config.Route{{Name: "r", Limits: config.RouteLimits{
		Total:     config.Limit{Rate: 1e12, MaxConcurrent: 1 << 30},
		PerClient: config.Limit{Rate: 1e12, MaxConcurrent: 1 << 30},
		PerSigner: config.Limit{Rate: 1e12, MaxConcurrent: 1 << 30},
	}}}})
	l := s.Route("r")
	signer := Signer{Thumbprint: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}
	b.ReportAllocs()
	for b.Loop() {
		var tk Ticket
		p := s.Client("192.0.2.1:4711", nil)
		if err := l.Admit(&tk, p); err != nil {
			b.Fatal(err)
		}
		if err := l.AdmitSigner(&tk, signer); err != nil {
			b.Fatal(err)
		}
		tk.Release()
	}
}
