package limit

import (
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Scope is what a limit counts: the route as a whole, one client address,
// or one verified signer. Its String is the scope label of
// wssgw_ratelimit_rejections_total.
type Scope uint8

// Scopes.
const (
	ScopeRoute Scope = iota
	ScopeClient
	ScopeSigner
	numScopes
)

var scopeNames = [numScopes]string{ScopeRoute: "route", ScopeClient: "client", ScopeSigner: "signer"}

func (s Scope) String() string {
	if s >= numScopes {
		return "unknown"
	}
	return scopeNames[s]
}

// Kind is the part of a limit that refused a request.
type Kind uint8

// Kinds; the zero Kind refuses nothing.
const (
	KindRate        Kind = iota + 1 // the token bucket was empty
	KindConcurrency                 // maxConcurrent requests were in flight
)

func (k Kind) String() string {
	switch k {
	case KindRate:
		return "rate"
	case KindConcurrency:
		return "concurrency"
	}
	return "none"
}

// Signer is a verified identity a perSigner limit counts: the SHA-256
// thumbprint of the signing certificate or, for a message signed by no
// certificate, its UsernameToken username. It is comparable, so it is a
// map key without copying the strings.
type Signer struct {
	Thumbprint string
	Username   string
}

// IsZero reports an identity-less message (no signer, no username).
func (s Signer) IsZero() bool { return s == Signer{} }

// String names the signer in the request log as the log names it
// elsewhere (signer_sha256) or as the username.
func (s Signer) String() string {
	if s.Thumbprint != "" {
		return "sha256:" + s.Thumbprint
	}
	return "user:" + s.Username
}

// Refusal is a request a limit refused: the gateway answers 429 with
// Retry-After (gateway/fault.go) and logs the route, scope, kind and
// client.
type Refusal struct {
	Route string
	Scope Scope
	Kind  Kind
	// Client is whom the request came from: the address prefix (route and
	// client scopes) or the signer (signer scope).
	Client string
	// Limit is the configured value that was reached: requests per second
	// or requests in flight.
	Limit float64
	// RetryAfter is when a token is due (rate), or a guess (concurrency).
	RetryAfter time.Duration
}

func (r *Refusal) Error() string {
	unit := " requests/s"
	if r.Kind == KindConcurrency {
		unit = " requests in flight"
	}
	return "limit: route " + r.Route + ": " + r.Scope.String() + " " + r.Kind.String() + " limit of " +
		strconv.FormatFloat(r.Limit, 'g', -1, 64) + unit + " reached by " + r.Client
}

// concurrencyRetry is the Retry-After of a concurrency refusal: requests
// in flight end at no predictable time, so a short, fixed wait.
const concurrencyRetry = time.Second

// rules are a route's three limits, swapped as a whole by a reload.
type rules struct {
	total, client, signer rule
}

// Limiter holds one route's limits and their state.
type Limiter struct {
	name    string
	now     func() time.Duration
	rules   atomic.Pointer[rules]
	total   slot
	clients *table[netip.Prefix]
	signers *table[Signer]
}

// slot is the route-wide bucket and in-flight count.
type slot struct {
	mu     sync.Mutex
	bucket bucket
	active int
}

// Ticket is what an admitted request holds until it ends; Release gives
// back its in-flight places. The zero Ticket holds nothing. It is a value
// (kept in the request's state) so that admitting allocates nothing.
type Ticket struct {
	l      *Limiter
	total  bool
	client *entry[netip.Prefix]
	signer *entry[Signer]
}

// Admit applies the route-wide and the per-client limits to a request
// from client, before its body is read. On nil the request holds a place
// in t until t.Release. A nil Limiter (a route without limits) admits
// everything.
func (l *Limiter) Admit(t *Ticket, client netip.Prefix) error {
	if l == nil {
		return nil
	}
	rs := l.rules.Load()
	now := l.now()
	t.l = l
	// The client first: a client over its own limit must not use up the
	// route's tokens that other clients need.
	if rs.client.enabled() {
		e, kind, wait := l.clients.acquire(client, rs.client, now)
		if kind != 0 {
			return l.refusal(ScopeClient, kind, client.String(), rs.client, wait)
		}
		t.client = e
	}
	if rs.total.enabled() {
		if kind, wait := l.total.acquire(rs.total, now); kind != 0 {
			if t.client != nil {
				l.clients.refund(t.client, rs.client)
				t.client = nil
			}
			return l.refusal(ScopeRoute, kind, client.String(), rs.total, wait)
		}
		t.total = true
	}
	return nil
}

// AdmitSigner applies the per-signer limit to a verified request, before
// it is forwarded. A message without identity (s zero) is not counted.
func (l *Limiter) AdmitSigner(t *Ticket, s Signer) error {
	if l == nil || s.IsZero() {
		return nil
	}
	rs := l.rules.Load()
	if !rs.signer.enabled() {
		return nil
	}
	e, kind, wait := l.signers.acquire(s, rs.signer, l.now())
	if kind != 0 {
		return l.refusal(ScopeSigner, kind, s.String(), rs.signer, wait)
	}
	t.l, t.signer = l, e
	return nil
}

// Release gives back the places t holds; it may be called more than once.
func (t *Ticket) Release() {
	if t.l == nil {
		return
	}
	if t.total {
		t.l.total.release()
	}
	if t.client != nil {
		t.l.clients.release(t.client)
	}
	if t.signer != nil {
		t.l.signers.release(t.signer)
	}
	*t = Ticket{}
}

func (l *Limiter) refusal(s Scope, k Kind, client string, r rule, wait time.Duration) error {
	f := &Refusal{Route: l.name, Scope: s, Kind: k, Client: client, Limit: r.rate, RetryAfter: wait}
	if k == KindConcurrency {
		f.Limit, f.RetryAfter = float64(r.maxConcurrent), concurrencyRetry
	}
	return f
}

func (s *slot) acquire(r rule, now time.Duration) (Kind, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.maxConcurrent > 0 && s.active >= r.maxConcurrent {
		return KindConcurrency, 0
	}
	if ok, wait := s.bucket.take(r, now); !ok {
		return KindRate, wait
	}
	s.active++
	return 0, 0
}

func (s *slot) release() {
	s.mu.Lock()
	s.active--
	s.mu.Unlock()
}

// Stats are a Limiter's tracked identities, for the metrics.
type Stats struct {
	Clients, Signers               int    // remembered now
	ClientsEvicted, SignersEvicted uint64 // forgotten to make room, so far
}

// Stats reports the identities the limiter remembers.
func (l *Limiter) Stats() Stats {
	var st Stats
	st.Clients, st.ClientsEvicted = l.clients.size()
	st.Signers, st.SignersEvicted = l.signers.size()
	return st
}
