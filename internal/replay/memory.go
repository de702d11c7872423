package replay

import (
	"context"
	"fmt"
	"hash/maphash"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultMaxEntries is the default capacity of a Memory store. At about 100
// bytes an entry (a 32-byte digest key plus map overhead) it is roughly
// 100 MiB, and it covers, for example, 3,300 messages a second over a
// five-minute acceptance window.
const DefaultMaxEntries = 1_000_000

const (
	// shards splits the lock so that parallel requests rarely contend.
	shards = 32
	// sweepInterval bounds how long expired entries linger in a shard that
	// stopped growing, so memory goes back down after a burst.
	sweepInterval = 10 * time.Second
	// minSweepLen keeps small shards from being swept on every few inserts.
	minSweepLen = 1024
)

// MemoryOptions configures NewMemory.
type MemoryOptions struct {
	// MaxEntries bounds the number of remembered keys; 0 means
	// DefaultMaxEntries. When it is reached, Seen fails with an error
	// wrapping ErrUnavailable until entries expire: an unexpired entry is
	// never evicted, because forgetting it would accept its replay.
	MaxEntries int
	// Clock returns the current time; nil means time.Now. Tests set it.
	Clock func() time.Time
}

// Memory is a Store held in this process. It suits a single replica: two
// replicas with their own Memory would each accept the same message once.
//
// Expired entries are removed by the Seen calls themselves: a shard is swept
// when it has doubled since its last sweep or has not been swept for a
// while, and every shard is swept when the store is full. The cost is
// amortized over inserts and no goroutine is left running.
type Memory struct {
	seed    maphash.Seed
	clock   func() time.Time
	max     int64
	count   atomic.Int64 // entries across all shards, expired ones included
	closed  atomic.Bool
	errFull error
	shards  [shards]shard
}

type shard struct {
	mu sync.Mutex
	// m maps the key (a copy) to its expiry in Unix nanoseconds.
	m map[string]int64
	// minExp is at most the earliest expiry in m, so that a sweep that
	// could not remove anything is skipped.
	minExp int64
	// nextSweep and sweepLen are the time and size that trigger the next
	// sweep.
	nextSweep int64
	sweepLen  int
	_         [64]byte // keeps neighbouring shards' locks off one cache line
}

// NewMemory returns an empty Memory store.
func NewMemory(o MemoryOptions) *Memory {
	if o.MaxEntries <= 0 {
		o.MaxEntries = DefaultMaxEntries
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	m := &Memory{
		seed:    maphash.MakeSeed(),
		clock:   o.Clock,
		max:     int64(o.MaxEntries),
		errFull: fmt.Errorf("replay: memory store full (%d entries): %w", o.MaxEntries, ErrUnavailable),
	}
	for i := range m.shards {
		m.shards[i] = shard{m: make(map[string]int64), minExp: math.MaxInt64, sweepLen: minSweepLen}
	}
	return m
}

// Seen implements Store. It does not block, so ctx is not consulted.
func (m *Memory) Seen(_ context.Context, key []byte, expires time.Time) (bool, error) {
	if m.closed.Load() {
		return true, errClosed
	}
	now, exp := unixNano(m.clock()), unixNano(expires)
	if exp <= now {
		return true, errExpired
	}
	if m.count.Load() >= m.max {
		// The expired entries that would make room may sit in any shard.
		// Shards with none are skipped in O(1), so a store full of live
		// entries costs a full request only 32 lock round trips.
		m.sweepAll(now)
	}
	// Keys are digests, but a seeded hash keeps an attacker who can choose
	// part of a key (a nonce) from piling keys into one shard.
	s := &m.shards[maphash.Bytes(m.seed, key)%shards]
	s.mu.Lock()
	defer s.mu.Unlock()

	if e, ok := s.m[string(key)]; ok {
		if e > now {
			return true, nil
		}
		// Expired but not yet swept: reuse the slot, the count is unchanged.
		s.m[string(key)] = exp
		return false, nil
	}

	if now >= s.minExp && (len(s.m) >= s.sweepLen || now >= s.nextSweep) {
		m.sweep(s, now)
	}
	if m.count.Add(1) > m.max {
		m.count.Add(-1)
		return true, m.errFull
	}
	s.m[string(key)] = exp
	s.minExp = min(s.minExp, exp)
	return false, nil
}

// Unix nanoseconds fit an int64 from 1677 to 2262 only; Time.UnixNano is
// undefined outside, and in practice wraps around.
var (
	maxUnixNano = time.Unix(0, math.MaxInt64)
	minUnixNano = time.Unix(0, math.MinInt64)
)

// unixNano is t.UnixNano saturated at the int64 range: an expiry after
// 2262 (a Timestamp Expires callers should have clamped, wss.checkReplay)
// is "never" for this store, not a wrapped-around time in 1677 that would
// reject the message as already expired.
func unixNano(t time.Time) int64 {
	switch {
	case t.After(maxUnixNano):
		return math.MaxInt64
	case t.Before(minUnixNano):
		return math.MinInt64
	}
	return t.UnixNano()
}

// sweepAll sweeps every shard that holds an expired entry. No shard lock is
// held by the caller.
func (m *Memory) sweepAll(now int64) {
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		if now >= s.minExp {
			m.sweep(s, now)
		}
		s.mu.Unlock()
	}
}

// sweep deletes the shard's expired entries. s.mu is held.
func (m *Memory) sweep(s *shard, now int64) {
	removed, minExp := 0, int64(math.MaxInt64)
	for k, e := range s.m {
		if e <= now {
			delete(s.m, k)
			removed++
		} else {
			minExp = min(minExp, e)
		}
	}
	m.count.Add(int64(-removed))
	s.minExp = minExp
	s.nextSweep = now + int64(sweepInterval)
	// Sweeping again only once the shard has doubled makes the sweep's
	// cost O(1) per insert, like a garbage collector's heap goal.
	s.sweepLen = max(2*len(s.m), minSweepLen)
}

// Len returns the number of entries held, including expired entries not yet
// swept. It is meant for metrics and tests.
func (m *Memory) Len() int { return int(m.count.Load()) }

// Cap returns the capacity, MaxEntries: a full store fails closed. It is
// meant for metrics.
func (m *Memory) Cap() int { return int(m.max) }

// Close drops every entry. Seen fails closed afterwards.
func (m *Memory) Close() error {
	m.closed.Store(true)
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		m.count.Add(int64(-len(s.m)))
		clear(s.m)
		s.mu.Unlock()
	}
	return nil
}
