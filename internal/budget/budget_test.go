package budget

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type gauges struct{ held, budget atomic.Int64 }

func (g *gauges) MemoryHeld(n int64)   { g.held.Store(n) }
func (g *gauges) MemoryBudget(n int64) { g.budget.Store(n) }

func TestLease(t *testing.T) {
	tests := []struct {
		name    string
		limit   int64
		before  int64   // held by another lease
		reserve []int64 // successive Reserve calls on one lease
		wantErr bool
		held    int64 // the lease's bytes afterwards
	}{
		{name: "ok/within", limit: 100, reserve: []int64{60}, held: 60},
		{name: "ok/exactly-the-budget", limit: 100, before: 40, reserve: []int64{60}, held: 60},
		{name: "ok/grows-by-the-difference", limit: 100, reserve: []int64{30, 70, 100}, held: 100},
		{name: "ok/never-shrinks", limit: 100, reserve: []int64{70, 20}, held: 70},
		{name: "ok/unbounded", limit: 0, reserve: []int64{1 << 40}, held: 1 << 40},
		{name: "fail/over", limit: 100, reserve: []int64{101}, wantErr: true},
		{name: "fail/over-with-others", limit: 100, before: 50, reserve: []int64{51}, wantErr: true},
		{name: "fail/growth-over-keeps-what-it-had", limit: 100, reserve: []int64{60, 120}, wantErr: true, held: 60},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &gauges{}
			b := New(Limits{Bytes: tt.limit, RetryAfter: time.Second}, g)
			other := b.Lease()
			require.NoError(t, other.Reserve(tt.before))
			l := b.Lease()
			var err error
			for _, n := range tt.reserve {
				if err = l.Reserve(n); err != nil {
					break
				}
			}
			if tt.wantErr {
				var oe *OverloadError
				require.ErrorAs(t, err, &oe)
				assert.ErrorIs(t, err, ErrOverloaded)
				assert.Equal(t, ReasonMemory, oe.Reason)
				assert.Equal(t, time.Second, oe.RetryAfter)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tt.held, l.Held())
			assert.Equal(t, tt.before+tt.held, b.Held())
			assert.Equal(t, tt.before+tt.held, g.held.Load())
			l.Release()
			l.Release() // idempotent
			other.Release()
			assert.Zero(t, b.Held())
			assert.Zero(t, g.held.Load())
			require.NoError(t, l.Reserve(10), "a released lease reserves nothing")
			assert.Zero(t, b.Held())
		})
	}
}

func TestReader(t *testing.T) {
	tests := []struct {
		name    string
		budget  int64
		size    int
		limit   int64 // the most of the body held in memory
		wantErr bool
		held    int64
	}{
		{name: "ok/whole-body", budget: 1000, size: 800, limit: 1000, held: 800},
		{name: "ok/spooled-beyond-limit", budget: 1000, size: 5000, limit: 300, held: 300},
		{name: "fail/chunked-over-budget", budget: 1000, size: 5000, limit: 1 << 20, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := New(Limits{Bytes: tt.budget}, nil)
			l := b.Lease()
			// A reader that gives 100 bytes at a time, like a chunked body.
			r := l.Reader(io.NopCloser(io.LimitReader(&slow{bytes.NewReader(make([]byte, tt.size))}, int64(tt.size))), tt.limit)
			_, err := io.Copy(io.Discard, r)
			if tt.wantErr {
				require.ErrorIs(t, err, ErrOverloaded)
				assert.LessOrEqual(t, l.Held(), tt.budget)
			} else {
				require.NoError(t, err)
				assert.Equal(t, tt.held, l.Held())
			}
			l.Release()
			assert.Zero(t, b.Held())
		})
	}
}

type slow struct{ r io.Reader }

func (s *slow) Read(p []byte) (int, error) { return s.r.Read(p[:min(len(p), 100)]) }

func TestAcquire(t *testing.T) {
	t.Run("ok/free-worker", func(t *testing.T) {
		b := New(Limits{Workers: 1}, nil)
		release, err := b.Acquire(0)
		require.NoError(t, err)
		release()
		release() // idempotent: the worker is not given back twice
		r1, err := b.Acquire(0)
		require.NoError(t, err)
		_, err = b.Acquire(0)
		require.ErrorIs(t, err, ErrOverloaded, "one worker, no queue wait")
		r1()
	})
	t.Run("ok/waits-for-a-worker", func(t *testing.T) {
		b := New(Limits{Workers: 1, QueueWait: 5 * time.Second}, nil)
		r1, err := b.Acquire(0)
		require.NoError(t, err)
		time.AfterFunc(20*time.Millisecond, r1)
		r2, err := b.Acquire(0)
		require.NoError(t, err)
		r2()
	})
	t.Run("ok/reconfigure-wakes-waiters", func(t *testing.T) {
		b := New(Limits{Workers: 1, QueueWait: 5 * time.Second}, nil)
		r1, err := b.Acquire(0)
		require.NoError(t, err)
		time.AfterFunc(20*time.Millisecond, func() { b.Reconfigure(Limits{Workers: 2, QueueWait: 5 * time.Second}) })
		r2, err := b.Acquire(0)
		require.NoError(t, err)
		r1()
		r2()
	})
	t.Run("ok/scratch-held-while-working", func(t *testing.T) {
		b := New(Limits{Bytes: 100, Workers: 1}, nil)
		release, err := b.Acquire(70)
		require.NoError(t, err)
		assert.Equal(t, int64(70), b.Held())
		release()
		release()
		assert.Zero(t, b.Held())
	})
	t.Run("fail/scratch-over-budget", func(t *testing.T) {
		b := New(Limits{Bytes: 100, Workers: 1}, nil)
		l := b.Lease()
		require.NoError(t, l.Reserve(50))
		_, err := b.Acquire(51)
		var oe *OverloadError
		require.ErrorAs(t, err, &oe)
		assert.Equal(t, ReasonMemory, oe.Reason)
		r, err := b.Acquire(50)
		require.NoError(t, err, "the refused one gave its worker back")
		r()
		l.Release()
	})
	t.Run("fail/try-does-not-wait", func(t *testing.T) {
		// TryAcquire (a template hit's shadow check) never queues: not
		// for a busy worker, and not behind a message already waiting.
		b := New(Limits{Workers: 1, QueueWait: time.Hour}, nil)
		r1, err := b.Acquire(0)
		require.NoError(t, err)
		_, err = b.TryAcquire(0)
		var oe *OverloadError
		require.ErrorAs(t, err, &oe)
		assert.Equal(t, ReasonQueue, oe.Reason)
		waited := make(chan error)
		go func() {
			r, err := b.Acquire(0)
			if err == nil {
				r()
			}
			waited <- err
		}()
		for b.waiting() == 0 {
			runtime.Gosched()
		}
		r1()
		require.NoError(t, <-waited, "the waiter got the worker, not a TryAcquire")
		r2, err := b.TryAcquire(5)
		require.NoError(t, err, "a free worker is taken at once")
		r2()
		assert.Zero(t, b.Held())
	})
	t.Run("fail/queue-wait-over", func(t *testing.T) {
		b := New(Limits{Workers: 1, QueueWait: 10 * time.Millisecond, RetryAfter: 2 * time.Second}, nil)
		r1, err := b.Acquire(0)
		require.NoError(t, err)
		_, err = b.Acquire(0)
		var oe *OverloadError
		require.ErrorAs(t, err, &oe)
		assert.Equal(t, ReasonQueue, oe.Reason)
		assert.Equal(t, 2*time.Second, oe.RetryAfter)
		r1()
		r2, err := b.Acquire(0)
		require.NoError(t, err, "the timed-out waiter left the queue")
		r2()
	})
}

// TestConcurrent runs leases and workers from many goroutines (with -race):
// the bounds hold at every moment and everything is given back.
func TestConcurrent(t *testing.T) {
	const workers, budget = 3, 1000
	b := New(Limits{Bytes: budget, Workers: workers, QueueWait: time.Second}, nil)
	var busy, maxBusy atomic.Int64
	var refused atomic.Int64
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := b.Lease()
			defer l.Release()
			if err := l.Reserve(int64(50 + i%7*20)); err != nil {
				refused.Add(1)
				return
			}
			assert.LessOrEqual(t, b.Held(), int64(budget))
			release, err := b.Acquire(0)
			if err != nil {
				refused.Add(1)
				return
			}
			n := busy.Add(1)
			for {
				m := maxBusy.Load()
				if n <= m || maxBusy.CompareAndSwap(m, n) {
					break
				}
			}
			time.Sleep(time.Millisecond)
			busy.Add(-1)
			release()
		}()
	}
	// Shrinking and growing under load changes nothing already held.
	b.Reconfigure(Limits{Bytes: budget / 2, Workers: 1, QueueWait: time.Second})
	b.Reconfigure(Limits{Bytes: budget, Workers: workers, QueueWait: time.Second})
	wg.Wait()
	assert.LessOrEqual(t, maxBusy.Load(), int64(workers))
	assert.Zero(t, b.Held())
	b.mu.Lock()
	defer b.mu.Unlock()
	assert.Zero(t, b.busy)
	assert.Empty(t, b.queue)
	t.Logf("refused %d of 64", refused.Load())
}

func TestOverloadErrorText(t *testing.T) {
	err := error(&OverloadError{Reason: ReasonMemory, Want: 5, Held: 10, Limit: 12})
	assert.Equal(t, "budget: in-flight request bytes over budget: 10 held + 5 wanted > 12", err.Error())
	assert.True(t, errors.Is(err, ErrOverloaded))
}

// waiting is how many messages wait for a worker.
func (b *Budget) waiting() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.queue)
}
