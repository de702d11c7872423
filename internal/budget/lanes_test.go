package budget

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lanesBudget is a budget with first-sight lanes of share × procs CPUs, a
// fake clock and template hits flowing.
func lanesBudget(share float64, procs int) (*Budget, *fakeTime) {
	b := New(Limits{FirstSightShare: share, Procs: procs, RetryAfter: 2 * time.Second}, nil)
	ft := withFakeTime(b)
	b.NoteHit()
	return b, ft
}

// refusedFirstSight asserts err is the lanes' refusal.
func refusedFirstSight(t *testing.T, err error) {
	t.Helper()
	var oe *OverloadError
	require.ErrorAs(t, err, &oe)
	assert.ErrorIs(t, err, ErrOverloaded)
	assert.Equal(t, &OverloadError{Reason: ReasonFirstSight, Limit: 1, RetryAfter: 2 * time.Second}, oe)
}

// TestFirstSightLanes (issue 14): while template hits flow, each lane
// runs one first sight at a time, paced to FirstSightShare × Procs of a
// CPU, and refuses at once what finds it busy or cooling; lanes are
// independent and bounded in number.
func TestFirstSightLanes(t *testing.T) {
	t.Run("ok/one-at-a-time", func(t *testing.T) {
		b, _ := lanesBudget(0.5, 2) // a whole CPU: no cooldown
		leave, err := b.EnterFirstSight(7)
		require.NoError(t, err)
		_, err = b.EnterFirstSight(7)
		refusedFirstSight(t, err)
		leave()
		leave2, err := b.EnterFirstSight(7)
		require.NoError(t, err, "duty 1: free as soon as it is left")
		leave2()
	})
	t.Run("ok/cooldown-exact", func(t *testing.T) {
		for _, tc := range []struct {
			share float64
			procs int
			d     time.Duration
			cool  time.Duration
		}{
			{share: 0.125, procs: 2, d: 40 * time.Millisecond, cool: 120 * time.Millisecond}, // duty 1/4
			{share: 0.02, procs: 2, d: 40 * time.Millisecond, cool: 960 * time.Millisecond},  // the default on 2 CPUs
			{share: 0.25, procs: 2, d: 40 * time.Millisecond, cool: 40 * time.Millisecond},   // duty 1/2
			{share: 0.9, procs: 2, d: 40 * time.Millisecond, cool: 0},                        // duty 1.8: none
		} {
			b, ft := lanesBudget(tc.share, tc.procs)
			leave, err := b.EnterFirstSight(1)
			require.NoError(t, err)
			ft.now = ft.now.Add(tc.d)
			leave()
			if tc.cool > 0 {
				ft.now = ft.now.Add(tc.cool - time.Nanosecond)
				b.NoteHit()
				_, err = b.EnterFirstSight(1)
				refusedFirstSight(t, err)
				ft.now = ft.now.Add(time.Nanosecond)
			}
			leave, err = b.EnterFirstSight(1)
			require.NoError(t, err, "share %v of %d CPUs: the lane opens d × (1/duty − 1) = %s after it was left", tc.share, tc.procs, tc.cool)
			leave()
			assert.Empty(t, ft.pending, "a deadline, no timer")
		}
	})
	t.Run("ok/lanes-independent", func(t *testing.T) {
		b, ft := lanesBudget(0.02, 2)
		leave1, err := b.EnterFirstSight(1)
		require.NoError(t, err)
		for range 100 { // lane 1 flooded while busy
			_, err = b.EnterFirstSight(1)
			refusedFirstSight(t, err)
		}
		leave2, err := b.EnterFirstSight(2)
		require.NoError(t, err, "a busy lane never refuses another lane")
		ft.now = ft.now.Add(10 * time.Millisecond)
		leave1()
		for range 100 { // lane 1 flooded while cooling
			_, err = b.EnterFirstSight(1)
			refusedFirstSight(t, err)
		}
		leave0, err := b.EnterFirstSight(0)
		require.NoError(t, err, "a cooling lane never refuses another lane")
		leave0()
		leave2()
	})
	t.Run("ok/no-hits-no-bound", func(t *testing.T) {
		b := New(Limits{FirstSightShare: 0.02, Procs: 2}, nil)
		ft := withFakeTime(b)
		l1, err := b.EnterFirstSight(1)
		require.NoError(t, err)
		l2, err := b.EnterFirstSight(1)
		require.NoError(t, err, "no hit flows: nothing to protect")
		b.NoteHit()
		ft.now = ft.now.Add(hitWindow)
		l3, err := b.EnterFirstSight(1)
		require.NoError(t, err, "no hit within hitWindow")
		l1()
		l2()
		l3()
	})
	t.Run("ok/share-off", func(t *testing.T) {
		for _, lim := range []Limits{
			{FirstSightShare: 0, Procs: 2},
			{FirstSightShare: 1, Procs: 2},
			{FirstSightShare: 0.02, Procs: 0},
		} {
			b := New(lim, nil)
			withFakeTime(b)
			b.NoteHit()
			l1, err := b.EnterFirstSight(1)
			require.NoError(t, err)
			l2, err := b.EnterFirstSight(1)
			require.NoError(t, err, "%+v: no lanes", lim)
			l1()
			l2()
		}
	})
	t.Run("ok/leave-twice", func(t *testing.T) {
		b, ft := lanesBudget(0.25, 2) // duty 1/2: cooldown = d
		leaveA, err := b.EnterFirstSight(1)
		require.NoError(t, err)
		ft.now = ft.now.Add(10 * time.Millisecond)
		leaveA()
		ft.now = ft.now.Add(5 * time.Millisecond)
		leaveA() // must not restart the cooldown from now
		ft.now = ft.now.Add(5 * time.Millisecond)
		b.NoteHit()
		leaveB, err := b.EnterFirstSight(1)
		require.NoError(t, err, "the cooldown counts from the first leave")
		leaveA() // late, during B's hold: must not end it
		_, err = b.EnterFirstSight(1)
		refusedFirstSight(t, err)
		leaveB()
	})
	t.Run("ok/reconfigure-keeps-holds", func(t *testing.T) {
		b, _ := lanesBudget(0.5, 2)
		leave, err := b.EnterFirstSight(1)
		require.NoError(t, err)
		b.Reconfigure(Limits{FirstSightShare: 0, Procs: 2})
		l2, err := b.EnterFirstSight(1)
		require.NoError(t, err, "lanes off")
		l2()
		b.Reconfigure(Limits{FirstSightShare: 0.5, Procs: 2, RetryAfter: 2 * time.Second})
		_, err = b.EnterFirstSight(1)
		refusedFirstSight(t, err) // the hold admitted before the reloads
		leave()
		l3, err := b.EnterFirstSight(1)
		require.NoError(t, err)
		l3()
	})
	t.Run("ok/map-bound-recycles-idle", func(t *testing.T) {
		b, ft := lanesBudget(0.25, 2) // cooldown = d
		var leaves []func()
		for i := range maxLanes {
			l, err := b.EnterFirstSight(uint64(i))
			require.NoError(t, err)
			leaves = append(leaves, l)
		}
		_, err := b.EnterFirstSight(maxLanes)
		refusedFirstSight(t, err) // every lane busy
		assert.Equal(t, int64(math.MaxInt64), b.lanes.noSweepBefore, "no lane can be idle before one is left: no sweep")
		ft.now = ft.now.Add(10 * time.Millisecond)
		leaves[3]() // cooling until +20ms
		assert.Equal(t, int64(ft.now.Add(10*time.Millisecond).Sub(b.epoch)), b.lanes.noSweepBefore, "the next sweep when lane 3 cools down")
		ft.now = ft.now.Add(5 * time.Millisecond)
		leaves[5]() // cooling until +30ms
		b.NoteHit()
		_, err = b.EnterFirstSight(maxLanes)
		refusedFirstSight(t, err) // none idle yet
		ft.now = ft.now.Add(5 * time.Millisecond)
		b.NoteHit()
		l, err := b.EnterFirstSight(maxLanes)
		require.NoError(t, err, "lane 3's cooldown is over: it is dropped")
		_, err = b.EnterFirstSight(maxLanes + 1)
		refusedFirstSight(t, err) // lane 5 still cooling
		assert.Len(t, b.lanes.m, maxLanes)
		ft.now = ft.now.Add(10 * time.Millisecond)
		b.NoteHit()
		l2, err := b.EnterFirstSight(maxLanes + 1)
		require.NoError(t, err)
		_, err = b.EnterFirstSight(3)
		refusedFirstSight(t, err) // the map is full of busy lanes again
		l()
		l2()
		for _, leave := range leaves {
			leave()
		}
	})
	t.Run("fail/map-full-of-busy-lanes", func(t *testing.T) {
		b, _ := lanesBudget(0.5, 2)
		for i := range maxLanes {
			_, err := b.EnterFirstSight(uint64(i) + 1000)
			require.NoError(t, err)
		}
		for i := range 3 {
			_, err := b.EnterFirstSight(uint64(i))
			refusedFirstSight(t, err)
		}
		assert.Len(t, b.lanes.m, maxLanes)
	})
}

func TestFirstSightErrorText(t *testing.T) {
	err := error(&OverloadError{Reason: ReasonFirstSight, Limit: 1})
	assert.Equal(t, "budget: the signer's first-sight lane (a message shape never accepted before, while template hits flow) is busy or cooling down", err.Error())
}

// TestFirstSightLanesConcurrent: many goroutines on few lanes, on the real
// clock; run with -race. Two messages never hold one lane at once.
func TestFirstSightLanesConcurrent(t *testing.T) {
	for _, share := range []float64{0.5, 0.25} { // no cooldown; cooldown = d
		b := New(Limits{FirstSightShare: share, Procs: 2}, nil)
		const lanes = 3
		var (
			in               [lanes]atomic.Int32
			admitted, refusd atomic.Int64
			twice            atomic.Bool
			wg               sync.WaitGroup
		)
		for g := range 16 {
			wg.Go(func() {
				for i := range 400 {
					b.NoteHit()
					lane := uint64((g + i) % lanes)
					leave, err := b.EnterFirstSight(lane)
					if err != nil {
						refusd.Add(1)
						runtime.Gosched()
						continue
					}
					admitted.Add(1)
					if in[lane].Add(1) > 1 {
						twice.Store(true)
					}
					runtime.Gosched()
					in[lane].Add(-1)
					leave()
					if i%7 == 0 {
						leave() // a second call ends nothing
					}
				}
			})
		}
		wg.Wait()
		assert.False(t, twice.Load(), "share %v: two messages in one lane at once", share)
		assert.Positive(t, admitted.Load())
		assert.Positive(t, refusd.Load())
		t.Logf("share %v: %d admitted, %d refused", share, admitted.Load(), refusd.Load())
	}
}

// BenchmarkEnterFirstSight is the lanes' cost on a hit-free DOM path: an
// admission and its leave on an existing lane, and a refusal.
func BenchmarkEnterFirstSight(b *testing.B) {
	b.Run("admit-leave", func(b *testing.B) {
		bud, _ := lanesBudget(0.5, 2) // duty 1: the lane is free again at once
		leave, _ := bud.EnterFirstSight(1)
		leave()
		b.ReportAllocs()
		for b.Loop() {
			leave, err := bud.EnterFirstSight(1)
			if err != nil {
				b.Fatal(err)
			}
			leave()
		}
	})
	b.Run("refuse", func(b *testing.B) {
		bud, _ := lanesBudget(0.5, 2)
		leave, _ := bud.EnterFirstSight(1)
		defer leave()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := bud.EnterFirstSight(1); err == nil {
				b.Fatal("admitted to a busy lane")
			}
		}
	})
}
