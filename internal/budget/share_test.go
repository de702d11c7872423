package budget

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeTime steps the budget's clock and holds its timers until fired.
type fakeTime struct {
	now     time.Time
	pending []func()
	waits   []time.Duration
}

func withFakeTime(b *Budget) *fakeTime {
	ft := &fakeTime{now: time.Unix(1_800_000_000, 0)}
	b.clock = func() time.Time { return ft.now }
	b.after = func(d time.Duration, f func()) {
		ft.waits = append(ft.waits, d)
		ft.pending = append(ft.pending, f)
	}
	return ft
}

func (ft *fakeTime) fire() {
	fs := ft.pending
	ft.pending = nil
	for _, f := range fs {
		f()
	}
}

func reasonOf(t *testing.T, err error) string {
	t.Helper()
	var oe *OverloadError
	require.ErrorAs(t, err, &oe)
	return oe.Reason
}

// TestShare (issue 14): while template hits flow, the DOM engine holds at
// most ceil(share × procs) workers, paced to share × procs CPUs; with no
// hit in hitWindow it gets every worker again.
func TestShare(t *testing.T) {
	t.Run("ok/no-hits-every-worker", func(t *testing.T) {
		b := New(Limits{Workers: 2, Share: 0.5, Procs: 2}, nil)
		withFakeTime(b)
		r1, err := b.TryAcquire(0)
		require.NoError(t, err)
		r2, err := b.TryAcquire(0)
		require.NoError(t, err, "no hit flows: both workers")
		r1()
		r2()
	})
	t.Run("ok/hits-leave-a-worker", func(t *testing.T) {
		b := New(Limits{Workers: 2, Share: 0.5, Procs: 2}, nil)
		ft := withFakeTime(b)
		b.NoteHit()
		r1, err := b.TryAcquire(0)
		require.NoError(t, err)
		_, err = b.TryAcquire(0)
		assert.Equal(t, ReasonShare, reasonOf(t, err), "the second worker is the hits' while they flow")
		ft.now = ft.now.Add(hitWindow)
		r2, err := b.TryAcquire(0)
		require.NoError(t, err, "no hit for hitWindow: the share is not in force")
		_, err = b.TryAcquire(0)
		assert.Equal(t, ReasonQueue, reasonOf(t, err), "every worker busy")
		r1()
		r2()
		assert.Empty(t, ft.pending, "a whole CPU per worker: no pacing")
	})
	t.Run("ok/pacing", func(t *testing.T) {
		// A quarter of 2 CPUs: one worker working half the time.
		b := New(Limits{Workers: 4, Share: 0.25, Procs: 2}, nil)
		ft := withFakeTime(b)
		b.NoteHit()
		r1, err := b.TryAcquire(0)
		require.NoError(t, err)
		ft.now = ft.now.Add(40 * time.Millisecond) // the message's work
		b.NoteHit()
		r1()
		assert.Equal(t, []time.Duration{40 * time.Millisecond}, ft.waits, "the slot is kept as long again")
		_, err = b.TryAcquire(0)
		assert.Equal(t, ReasonShare, reasonOf(t, err), "cooling down")
		ft.fire()
		r2, err := b.TryAcquire(0)
		require.NoError(t, err, "the cooldown is over")
		r2()
	})
	t.Run("ok/waiter-gets-the-cooled-slot", func(t *testing.T) {
		b := New(Limits{Workers: 4, Share: 0.25, Procs: 2, QueueWait: time.Hour}, nil)
		ft := withFakeTime(b)
		b.NoteHit()
		r1, err := b.Acquire(0)
		require.NoError(t, err)
		got := make(chan error, 1)
		go func() {
			r, err := b.Acquire(0)
			if err == nil {
				r()
			}
			got <- err
		}()
		for b.waiting() == 0 {
			time.Sleep(time.Millisecond)
		}
		ft.now = ft.now.Add(time.Millisecond)
		r1()
		select {
		case err := <-got:
			t.Fatalf("a queued message got the slot during its cooldown (%v)", err)
		default:
		}
		ft.fire()
		require.NoError(t, <-got)
	})
	t.Run("ok/workers-bound-below-share", func(t *testing.T) {
		// domWorkers 1 on 4 CPUs, share 0.5: the worker bound is lower.
		b := New(Limits{Workers: 1, Share: 0.5, Procs: 4}, nil)
		withFakeTime(b)
		b.NoteHit()
		r1, err := b.TryAcquire(0)
		require.NoError(t, err)
		_, err = b.TryAcquire(0)
		assert.Equal(t, ReasonQueue, reasonOf(t, err))
		r1()
	})
	t.Run("ok/share-1-no-bound", func(t *testing.T) {
		for _, share := range []float64{0, 1} {
			b := New(Limits{Workers: 2, Share: share, Procs: 2}, nil)
			withFakeTime(b)
			b.NoteHit()
			r1, err := b.TryAcquire(0)
			require.NoError(t, err)
			r2, err := b.TryAcquire(0)
			require.NoError(t, err, "share %v", share)
			r1()
			r2()
		}
	})
}

func TestShareErrorText(t *testing.T) {
	err := error(&OverloadError{Reason: ReasonShare, Limit: 1})
	assert.Equal(t, "budget: the DOM engine's CPU share (1 worker(s) while template hits flow) is in use, queue wait over", err.Error())
}
