package template

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/wss"
)

// Options bound a policy's template store.
type Options struct {
	MaxTemplates   int     // templates held at most; the coldest are evicted
	MaxBytes       int     // estimated memory held at most
	LearnPerSecond float64 // new templates learned per second at most
	LearnBurst     int
	ShadowRate     float64 // fraction of template-path messages re-verified by the DOM engine
	// MaxMessageBytes: larger messages go to the DOM engine and are not
	// learned; 0 means no bound. Learning one costs several times its
	// size and its template as much again, for a fast path whose gain is
	// on the many small messages (issue 16: 7 MiB messages on the template
	// path tripled the gateway's peak memory).
	MaxMessageBytes int
	// LearnAfter: a new shape is learned when it is seen this many times
	// (sighting.go); 0 and 1 learn it at once.
	LearnAfter int
}

// Store is one policy's templates, merged in one automaton. Matching reads
// the published root without locks; learning and eviction build a new
// root under the mutex and publish it.
type Store struct {
	policy  *wss.Policy
	opts    Options
	metrics *metrics.TemplateMetrics

	root atomic.Pointer[node]
	seen sightings // unknown shapes, until seen LearnAfter times
	// signers are the claimed signers of accepted misses and their
	// lanes: their first sights take their own (firstsight.go).
	signers signerLanes

	mu     sync.Mutex
	dict   []byte // exemplars deflate against it
	packer packer // deflates them (exemplar.go)
	byID   map[string]*Template
	heads  *heads // byID's templates by the bytes they offer for sharing
	bytes  int
	tokens float64
	last   time.Time
}

// NewStore returns an empty store for policy p. tm may be nil.
func NewStore(p *wss.Policy, o Options, tm *metrics.TemplateMetrics) *Store {
	return &Store{policy: p, opts: o, metrics: tm, byID: map[string]*Template{}, heads: newHeads(), tokens: float64(o.LearnBurst)}
}

// Policy is the policy the store's templates were learned under.
func (s *Store) Policy() *wss.Policy { return s.policy }

// allow takes a learning token (token bucket).
func (s *Store) allow(now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.last.IsZero() {
		s.tokens = min(float64(s.opts.LearnBurst), s.tokens+now.Sub(s.last).Seconds()*s.opts.LearnPerSecond)
	}
	s.last = now
	if s.tokens < 1 {
		return false
	}
	s.tokens--
	return true
}

// add inserts t, evicting the coldest templates to stay in bounds.
func (s *Store) add(t *Template) (added bool, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.byID[t.ID]; ok {
		// The same shape learned again: the DOM engine accepted a message
		// the template sent back to it (a trust store reload makes a
		// looked-up signer stale). The fresh template takes the old one's
		// place, at the same leaf of the automaton.
		t.learnedAt = old.learnedAt
		shareWith(t, s.heads)
		s.pack(t)
		s.heads.remove(old)
		s.heads.add(t)
		s.byID[t.ID] = t
		s.bytes += t.size - old.size
		s.root.Store(insert(s.root.Load(), t, 0, 0))
		return false, ""
	}
	if t.size > s.opts.MaxBytes || s.opts.MaxTemplates <= 0 {
		return false, metrics.SkipFull
	}
	evicted := 0
	for len(s.byID) >= s.opts.MaxTemplates || s.bytes+t.size > s.opts.MaxBytes {
		s.evictColdest()
		evicted++
	}
	t.learnedAt = time.Now().UnixNano()
	shareWith(t, s.heads)
	s.pack(t)
	s.byID[t.ID] = t
	s.heads.add(t)
	s.bytes += t.size
	if evicted > 0 {
		s.rebuild()
	} else {
		root := s.root.Load()
		if root == nil {
			root = &node{}
		}
		s.root.Store(insert(root, t, 0, 0))
	}
	if s.metrics != nil {
		s.metrics.Learned.Inc()
		s.metrics.Evicted.Add(float64(evicted))
		s.metrics.Count.Set(float64(len(s.byID)))
		s.metrics.Bytes.Set(float64(s.bytes))
	}
	return true, ""
}

func (s *Store) evictColdest() {
	var cold *Template
	for _, t := range s.byID {
		if cold == nil || t.lastUse() < cold.lastUse() {
			cold = t
		}
	}
	if cold != nil {
		delete(s.byID, cold.ID)
		s.heads.remove(cold)
		s.bytes -= cold.size
	}
}

func (t *Template) lastUse() int64 { return max(t.lastHit.Load(), t.learnedAt) }

// rebuild publishes an automaton of the held templates.
func (s *Store) rebuild() {
	root := &node{}
	for _, t := range s.sorted() {
		root = insert(root, t, 0, 0)
	}
	s.root.Store(root)
}

func (s *Store) sorted() []*Template {
	ts := make([]*Template, 0, len(s.byID))
	for _, t := range s.byID {
		ts = append(ts, t)
	}
	slices.SortFunc(ts, func(a, b *Template) int { return int(a.learnedAt - b.learnedAt) })
	return ts
}

// Templates returns the held templates, oldest first.
func (s *Store) Templates() []*Template {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sorted()
}

// Len and Bytes report the store's size.
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byID)
}

// Bytes is the estimated memory the templates hold.
func (s *Store) Bytes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bytes
}
