package replay

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeClock is a settable clock for Memory.
type fakeClock struct{ ns atomic.Int64 }

func newFakeClock() *fakeClock {
	c := &fakeClock{}
	c.ns.Store(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano())
	return c
}

func (c *fakeClock) Now() time.Time               { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) Advance(d time.Duration)      { c.ns.Add(int64(d)) }
func (c *fakeClock) In(d time.Duration) time.Time { return c.Now().Add(d) }

// key returns a digest-like key, as the callers build them.
func key(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

func TestMemorySeen(t *testing.T) {
	type step struct {
		key          string
		advance      time.Duration // before the call
		ttl          time.Duration // expiry relative to the clock after advance
		wantReplayed bool
		wantErr      error
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"ok/first-seen", []step{
			{key: "a", ttl: time.Minute},
		}},
		{"ok/distinct-keys", []step{
			{key: "a", ttl: time.Minute},
			{key: "b", ttl: time.Minute},
		}},
		{"fail/replayed", []step{
			{key: "a", ttl: time.Minute},
			{key: "a", ttl: time.Minute, wantReplayed: true},
		}},
		{"fail/replayed-just-before-expiry", []step{
			{key: "a", ttl: time.Minute},
			{key: "a", advance: time.Minute - time.Nanosecond, ttl: time.Minute, wantReplayed: true},
		}},
		{"fail/replayed-with-later-expiry-keeps-first", []step{
			// A replay does not extend the entry: it stays until the
			// first expiry, then the key is free again.
			{key: "a", ttl: time.Minute},
			{key: "a", advance: 30 * time.Second, ttl: time.Hour, wantReplayed: true},
			{key: "a", advance: 30 * time.Second, ttl: time.Minute},
		}},
		{"ok/seen-again-after-expiry", []step{
			{key: "a", ttl: time.Minute},
			{key: "a", advance: time.Minute, ttl: time.Minute},
			{key: "a", ttl: time.Minute, wantReplayed: true},
		}},
		{"fail/expiry-already-passed", []step{
			{key: "a", ttl: -time.Second, wantReplayed: true, wantErr: ErrExpired},
		}},
		{"fail/expiry-now", []step{
			{key: "a", ttl: 0, wantReplayed: true, wantErr: ErrExpired},
			// Nothing was recorded by the failed call.
			{key: "a", ttl: time.Minute},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newFakeClock()
			m := NewMemory(MemoryOptions{Clock: clk.Now})
			t.Cleanup(func() { _ = m.Close() })
			for i, s := range tt.steps {
				clk.Advance(s.advance)
				replayed, err := m.Seen(t.Context(), key(s.key), clk.In(s.ttl))
				if s.wantErr != nil {
					require.ErrorIs(t, err, s.wantErr, "step %d", i)
				} else {
					require.NoError(t, err, "step %d", i)
				}
				assert.Equal(t, s.wantReplayed, replayed, "step %d", i)
			}
		})
	}
}

func TestMemoryKeyIsCopied(t *testing.T) {
	clk := newFakeClock()
	m := NewMemory(MemoryOptions{Clock: clk.Now})
	buf := key("a")
	replayed, err := m.Seen(t.Context(), buf, clk.In(time.Minute))
	require.NoError(t, err)
	require.False(t, replayed)
	// Callers reuse their buffers: the store must not keep aliasing them.
	copy(buf, key("b"))
	replayed, err = m.Seen(t.Context(), key("a"), clk.In(time.Minute))
	require.NoError(t, err)
	assert.True(t, replayed)
}

func TestMemoryConcurrent(t *testing.T) {
	const goroutines, keys = 32, 200
	m := NewMemory(MemoryOptions{})
	onceFresh(t, []Store{m}, goroutines, keys, time.Now().Add(time.Hour))
	assert.Equal(t, keys, m.Len())
}

func TestMemoryCapacityFailsClosed(t *testing.T) {
	clk := newFakeClock()
	m := NewMemory(MemoryOptions{MaxEntries: 3, Clock: clk.Now})
	for _, k := range []string{"a", "b", "c"} {
		replayed, err := m.Seen(t.Context(), key(k), clk.In(time.Minute))
		require.NoError(t, err, k)
		require.False(t, replayed, k)
	}

	replayed, err := m.Seen(t.Context(), key("d"), clk.In(time.Minute))
	require.ErrorIs(t, err, ErrUnavailable)
	assert.True(t, replayed, "a full store must not answer \"not replayed\"")

	// Nothing was evicted to make room: the first keys are still replays.
	for _, k := range []string{"a", "b", "c"} {
		replayed, err := m.Seen(t.Context(), key(k), clk.In(time.Minute))
		require.NoError(t, err, k)
		assert.True(t, replayed, k)
	}
	assert.Equal(t, 3, m.Len())

	// Once the entries expire, the room comes back.
	clk.Advance(time.Minute)
	for _, k := range []string{"d", "e", "f"} {
		replayed, err := m.Seen(t.Context(), key(k), clk.In(time.Minute))
		require.NoError(t, err, k)
		require.False(t, replayed, k)
	}
	assert.LessOrEqual(t, m.Len(), 3)
}

func TestMemorySweep(t *testing.T) {
	t.Run("ok/periodic", func(t *testing.T) {
		clk := newFakeClock()
		m := NewMemory(MemoryOptions{Clock: clk.Now})
		const n = 20_000
		for i := range n {
			_, err := m.Seen(t.Context(), binary.AppendUvarint(nil, uint64(i)), clk.In(time.Second))
			require.NoError(t, err)
		}
		require.Equal(t, n, m.Len())
		// Past the sweep interval, the first insert into each shard sweeps
		// it, so the expired entries are all gone.
		clk.Advance(sweepInterval + time.Second)
		for i := range n {
			_, err := m.Seen(t.Context(), binary.AppendUvarint(nil, uint64(n+i)), clk.In(time.Second))
			require.NoError(t, err)
		}
		assert.Equal(t, n, m.Len())
	})
	t.Run("ok/bounded-by-growth", func(t *testing.T) {
		// Entries expire faster than the sweep interval; growth alone must
		// trigger sweeps, or memory would grow with traffic.
		clk := newFakeClock()
		m := NewMemory(MemoryOptions{Clock: clk.Now})
		const steps, perStep = 200, 1000
		for s := range steps {
			for i := range perStep {
				_, err := m.Seen(t.Context(), binary.AppendUvarint(nil, uint64(s*perStep+i)), clk.In(time.Millisecond))
				require.NoError(t, err)
			}
			clk.Advance(2 * time.Millisecond)
		}
		// Each shard holds at most about twice its live entries, or
		// 2*minSweepLen while small.
		assert.LessOrEqual(t, m.Len(), 2*shards*minSweepLen)
	})
}

func TestMemoryClose(t *testing.T) {
	m := NewMemory(MemoryOptions{})
	_, err := m.Seen(t.Context(), key("a"), time.Now().Add(time.Minute))
	require.NoError(t, err)
	require.NoError(t, m.Close())
	assert.Equal(t, 0, m.Len())

	replayed, err := m.Seen(t.Context(), key("a"), time.Now().Add(time.Minute))
	require.ErrorIs(t, err, ErrUnavailable)
	assert.True(t, replayed)
}

// TestMemoryFarExpiry: an expiry past 2262 does not fit int64 Unix
// nanoseconds. Wrapped around, it read as 1677: already expired, so a valid
// message was refused, and a store that took it for "not replayed" would
// accept its replay.
func TestMemoryFarExpiry(t *testing.T) {
	for _, tt := range []struct {
		name    string
		expires time.Time
	}{
		{"ok/year-2300", time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"ok/year-9999", time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)},
		{"ok/just-past-int64-nanoseconds", time.Unix(0, math.MaxInt64).Add(time.Nanosecond)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := NewMemory(MemoryOptions{})
			replayed, err := m.Seen(t.Context(), key("m"), tt.expires)
			require.NoError(t, err)
			require.False(t, replayed, "first sight")
			replayed, err = m.Seen(t.Context(), key("m"), tt.expires)
			require.NoError(t, err)
			assert.True(t, replayed, "second sight is a replay")
		})
	}
}

// onceFresh races perStore goroutines on each of stores (one store, or
// replicas sharing one backend) over the same keys, and requires that
// exactly one call per key got replayed == false (Store: Seen is atomic).
func onceFresh(t *testing.T, stores []Store, perStore, keys int, expires time.Time) {
	t.Helper()
	fresh := make([]atomic.Int32, keys)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, s := range stores {
		for range perStore {
			wg.Go(func() {
				<-start
				for k := range keys {
					replayed, err := s.Seen(context.Background(), key(string(rune(k))), expires)
					if !assert.NoError(t, err) {
						return
					}
					if !replayed {
						fresh[k].Add(1)
					}
				}
			})
		}
	}
	close(start)
	wg.Wait()
	for k := range fresh {
		require.EqualValues(t, 1, fresh[k].Load(), "key %d: calls that got replayed == false", k)
	}
}
