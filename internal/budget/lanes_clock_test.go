package budget

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFirstSightLanesClockStep (issue 14, review): the lanes' deadlines
// are instants of the budget's clock. Production reads them as monotonic
// durations (time.Now's monotonic reading, Budget.since), so an NTP step
// cannot move them; where a clock has no monotonic reading (the fake
// clock here), a step back past the moment a lane was left must not keep
// the lane closed for the size of the step, nor the hits "flowing" for it.
func TestFirstSightLanesClockStep(t *testing.T) {
	t.Run("ok/step-back-opens-a-cooling-lane", func(t *testing.T) {
		b, ft := lanesBudget(0.02, 2)
		leave, err := b.EnterFirstSight(1)
		require.NoError(t, err)
		ft.now = ft.now.Add(40 * time.Millisecond)
		leave() // closed 960 ms
		ft.now = ft.now.Add(-time.Hour)
		b.NoteHit()
		leave, err = b.EnterFirstSight(1)
		require.NoError(t, err, "the clock went back an hour: the lane must not stay closed for an hour")
		ft.now = ft.now.Add(40 * time.Millisecond)
		leave()
		_, err = b.EnterFirstSight(1)
		refusedFirstSight(t, err) // paced again from the new clock
		ft.now = ft.now.Add(960 * time.Millisecond)
		b.NoteHit()
		leave, err = b.EnterFirstSight(1)
		require.NoError(t, err)
		leave()
	})
	t.Run("ok/step-back-while-busy", func(t *testing.T) {
		b, ft := lanesBudget(0.02, 2)
		leave, err := b.EnterFirstSight(1)
		require.NoError(t, err)
		ft.now = ft.now.Add(-time.Hour)
		leave() // held "minus an hour": no cooldown
		b.NoteHit()
		leave, err = b.EnterFirstSight(1)
		require.NoError(t, err)
		leave()
	})
	t.Run("ok/hits-stop-flowing-after-a-step-back", func(t *testing.T) {
		b, ft := lanesBudget(0.02, 2)
		ft.now = ft.now.Add(-time.Hour)
		assert.False(t, b.hitsFlowing(), "a hit noted an hour 'later' is no recent hit")
		b.NoteHit()
		assert.True(t, b.hitsFlowing(), "a hit after the step is noted")
		ft.now = ft.now.Add(2 * hitWindow)
		assert.False(t, b.hitsFlowing(), "no hit for two windows of the clock as it reads now")
	})
	t.Run("ok/real-clock-is-monotonic", func(t *testing.T) {
		b := New(Limits{FirstSightShare: 0.02, Procs: 2}, nil)
		a := b.since()
		time.Sleep(time.Millisecond)
		assert.Greater(t, b.since(), a)
	})
}

// TestFirstSightLanesReconfigure: a reload while a lane is busy neither
// loses the message's hold nor breaks its leave; turning the lanes off
// admits at once, and back on the lane held before paces by the new duty.
func TestFirstSightLanesReconfigure(t *testing.T) {
	b, ft := lanesBudget(0.02, 2)
	leave, err := b.EnterFirstSight(1)
	require.NoError(t, err)
	b.Reconfigure(Limits{FirstSightShare: 0.25, Procs: 2, RetryAfter: 2 * time.Second}) // duty 1/2: cooldown = d
	_, err = b.EnterFirstSight(1)
	refusedFirstSight(t, err) // still held
	ft.now = ft.now.Add(40 * time.Millisecond)
	leave()
	ft.now = ft.now.Add(40*time.Millisecond - time.Nanosecond)
	b.NoteHit()
	_, err = b.EnterFirstSight(1)
	refusedFirstSight(t, err)
	b.Reconfigure(Limits{FirstSightShare: 0, Procs: 2})
	off, err := b.EnterFirstSight(1)
	require.NoError(t, err, "lanes off: admitted")
	off()
	b.Reconfigure(Limits{FirstSightShare: 0.25, Procs: 2, RetryAfter: 2 * time.Second})
	_, err = b.EnterFirstSight(1)
	refusedFirstSight(t, err) // the cooldown set before the reloads runs out
	ft.now = ft.now.Add(time.Nanosecond)
	l2, err := b.EnterFirstSight(1)
	require.NoError(t, err)
	l2()
}
