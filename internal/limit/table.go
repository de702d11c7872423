package limit

import (
	"sync"
	"time"
)

// entry is one client's (or signer's) state.
type entry[K comparable] struct {
	key        K
	bucket     bucket
	active     int // requests admitted and not yet released
	prev, next *entry[K]
}

// table remembers up to max identities, least recently seen forgotten
// first: a spray of source addresses then costs a bounded amount of memory
// and, once the table is full, no allocation (an evicted entry is reused).
// Forgetting an identity refills its bucket; with max far above the number
// of real clients only a sprayer's own entries are forgotten.
type table[K comparable] struct {
	mu         sync.Mutex
	byKey      map[K]*entry[K]
	head, tail *entry[K] // most and least recently seen
	max        int
	evicted    uint64 // identities forgotten to make room
}

func newTable[K comparable](max int) *table[K] {
	return &table[K]{byKey: make(map[K]*entry[K]), max: max}
}

// acquire admits a request of key under r, or says which part of r refused
// it and, for the rate, how long until a token. On success the caller holds
// the returned entry until release.
func (t *table[K]) acquire(key K, r rule, now time.Duration) (*entry[K], Kind, time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.byKey[key]
	if e == nil {
		e = t.insert(key)
	} else {
		t.toFront(e)
	}
	if r.maxConcurrent > 0 && e.active >= r.maxConcurrent {
		return nil, KindConcurrency, 0
	}
	if ok, wait := e.bucket.take(r, now); !ok {
		return nil, KindRate, wait
	}
	e.active++
	return e, 0, 0
}

// release ends a request admitted by acquire. The entry may have been
// forgotten meanwhile; counting on it is then harmless.
func (t *table[K]) release(e *entry[K]) {
	t.mu.Lock()
	e.active--
	t.mu.Unlock()
}

// refund undoes acquire for a request that a later check refused.
func (t *table[K]) refund(e *entry[K], r rule) {
	t.mu.Lock()
	e.active--
	e.bucket.refund(r)
	t.mu.Unlock()
}

// insert adds key at the front, forgetting the least recently seen
// identity when the table is full. Called with mu held.
func (t *table[K]) insert(key K) *entry[K] {
	var e *entry[K]
	for len(t.byKey) >= t.max && t.tail != nil {
		old := t.tail
		t.unlink(old)
		delete(t.byKey, old.key)
		t.evicted++
		if old.active == 0 && e == nil {
			e = old // nobody holds it: reuse it
		}
	}
	if e == nil {
		e = &entry[K]{}
	}
	*e = entry[K]{key: key}
	t.byKey[key] = e
	t.pushFront(e)
	return e
}

// resize sets the bound, forgetting the least recently seen identities
// beyond it (a reload that lowered clients.maxTracked).
func (t *table[K]) resize(max int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.max = max
	for len(t.byKey) > max && t.tail != nil {
		old := t.tail
		t.unlink(old)
		delete(t.byKey, old.key)
		t.evicted++
	}
}

// size is the number of identities remembered and forgotten so far.
func (t *table[K]) size() (int, uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.byKey), t.evicted
}

func (t *table[K]) toFront(e *entry[K]) {
	if t.head == e {
		return
	}
	t.unlink(e)
	t.pushFront(e)
}

func (t *table[K]) pushFront(e *entry[K]) {
	e.prev, e.next = nil, t.head
	if t.head != nil {
		t.head.prev = e
	}
	t.head = e
	if t.tail == nil {
		t.tail = e
	}
}

func (t *table[K]) unlink(e *entry[K]) {
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		t.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		t.tail = e.prev
	}
	e.prev, e.next = nil, nil
}
