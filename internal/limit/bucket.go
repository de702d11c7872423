package limit

import (
	"math"
	"time"

	"github.com/wssgw/wssgw/internal/config"
)

// rule is a config.Limit made ready to check: Burst resolved.
type rule struct {
	rate          float64 // tokens per second; 0: no rate limit
	burst         float64
	maxConcurrent int // 0: no bound
}

func newRule(l config.Limit) rule {
	return rule{rate: l.Rate, burst: float64(l.EffectiveBurst()), maxConcurrent: l.MaxConcurrent}
}

func (r rule) enabled() bool { return r.rate > 0 || r.maxConcurrent > 0 }

// bucket is a token bucket. It is hand-written rather than
// golang.org/x/time/rate's Limiter (docs/decisions.md): it lives under its
// table's lock, so it needs no lock of its own, takes its rule as an
// argument so that a reload changes the rule without touching the state,
// and says how long until the next token (Retry-After) without a
// reservation.
type bucket struct {
	tokens float64
	last   time.Duration // when tokens was computed, on the Set's clock
	set    bool          // tokens was set: a new bucket starts full
}

// take removes a token if there is one; otherwise it reports how long
// until there is.
func (b *bucket) take(r rule, now time.Duration) (bool, time.Duration) {
	if r.rate <= 0 {
		return true, 0
	}
	if !b.set {
		b.tokens, b.set = r.burst, true
	} else if dt := now - b.last; dt > 0 {
		b.tokens = math.Min(r.burst, b.tokens+dt.Seconds()*r.rate)
	}
	// A reload that lowered the burst caps what was saved up.
	b.tokens = math.Min(b.tokens, r.burst)
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) / r.rate * float64(time.Second))
}

// refund gives back a token taken for a request that a later check
// refused, so that the refusal does not cost the client its next request.
func (b *bucket) refund(r rule) {
	if r.rate > 0 {
		b.tokens = math.Min(r.burst, b.tokens+1)
	}
}
