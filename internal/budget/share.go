package budget

import (
	"math"
	"time"
)

// The DOM engine's CPU share (issue 14: "a bound on concurrent DOM work so
// fresh shapes cannot starve hits"). Every fresh shape, validly signed or
// garbage, runs on the DOM engine at several times a template hit's cost,
// and an attacker chooses how many he sends. Workers alone bounds the DOM
// engine to GOMAXPROCS messages at once, which is every CPU: a flood of
// fresh shapes could take them all while hits wait in the Go run queue.
// While template hits flow (one was verified within hitWindow), the DOM
// engine gets at most Share of the CPUs:
//
//   - at most ceil(Share × Procs) workers (fewer if Workers says so);
//   - when that is more than Share × Procs CPUs (Share 0.25 of 2 CPUs:
//     one worker, half a CPU), a worker that ran a message for d keeps
//     its slot for d × (1/duty − 1) more, duty being the share of a CPU
//     each worker may use, so that over time it works duty of the time.
//     d is wall time, at least the CPU time: on a loaded host the pacing
//     errs towards hits.
//
// What does not get a worker within the queue wait is refused with 503
// and Retry-After like any overload, with reason ReasonShare. A hit never
// takes a worker (its sampled shadow check takes one only if free), so
// hits are never slowed by the bound; they only keep the CPUs it leaves.
// When no hit flows (start-up, before anything is learned; a route whose
// every message is a new shape), there is nothing to protect and the DOM
// engine gets Workers.

// hitWindow is how recent the last template hit must be for the share to
// be in force.
const hitWindow = time.Second

// hitNoteEvery bounds how often NoteHit writes the shared timestamp: every
// hit reads it, at most one per this interval writes it.
const hitNoteEvery = 10 * time.Millisecond

// NoteHit tells the budget a template hit was verified: the DOM engine is
// held to its share for hitWindow.
func (b *Budget) NoteHit() {
	// 0 is "never": since is near 0 right after New. d < 0: the clock
	// stepped back (since).
	now := max(b.since(), 1)
	if last := b.lastHit.Load(); last == 0 || now-last >= int64(hitNoteEvery) || now < last {
		b.lastHit.Store(now)
	}
}

// hitsFlowing reports whether a template hit was verified within
// hitWindow.
func (b *Budget) hitsFlowing() bool {
	last := b.lastHit.Load()
	d := b.since() - last
	return last != 0 && d >= 0 && d < int64(hitWindow)
}

// limit is the number of workers the DOM engine may hold now (0: no
// bound), and whether that is the share's bound; b.mu is held.
func (b *Budget) limit() (n int, shared bool) {
	n = b.lim.Workers
	sw := shareWorkers(b.lim)
	if sw > 0 && (n <= 0 || sw < n) && b.hitsFlowing() {
		return sw, true
	}
	return n, false
}

// shareWorkers is the workers the share allows, 0 when it bounds nothing.
func shareWorkers(l Limits) int {
	if l.Share <= 0 || l.Share >= 1 || l.Procs <= 0 {
		return 0
	}
	return int(math.Ceil(l.Share * float64(l.Procs)))
}

// cooldown is how long a worker that ran a message for d keeps its slot
// before the next message may have it: 0 unless the share is in force and
// its workers may each use less than a whole CPU; b.mu is held.
func (b *Budget) cooldown(d time.Duration) time.Duration {
	n, shared := b.limit()
	if !shared || d <= 0 {
		return 0
	}
	duty := b.lim.Share * float64(b.lim.Procs) / float64(n)
	if duty >= 1 {
		return 0
	}
	return time.Duration(float64(d) * (1/duty - 1))
}
