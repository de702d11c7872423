package replay

import (
	"sync/atomic"
	"time"
)

// Reset is a loss of what a store remembered (issue 16): every key
// recorded before At may be gone, every key recorded after it is held. A
// message accepted before At can therefore be accepted again, so for the
// timestamp window after At the caller must refuse messages that could
// have been accepted before it (wss.Policy.checkReset).
type Reset struct {
	// At is when the store was found to have lost its keys, on this
	// process's clock. It is never earlier than the loss itself, which is
	// what makes refusing "created before At" safe.
	At time.Time
	// Live is true when the store lost keys while gateways were using it
	// (a Redis restarted, flushed or failed over under them): a message
	// accepted an instant before At may carry a Created up to the
	// policy's futureSkew after At, so the caller refuses those too.
	// It is false when a store starts out empty (CauseStartup): whatever
	// was accepted before was accepted by a process that had stopped
	// before this one started.
	Live bool
	// Cause is CauseStartup or CauseLost, the metric label.
	Cause string
	// Detail says what was seen, for the log ("canary key missing", "run_id
	// changed from ... to ...").
	Detail string
}

// Values of Reset.Cause.
const (
	// CauseStartup: the store began empty when this process started (the
	// memory store; a Redis without this deployment's canary key) and so
	// cannot know what a previous process accepted.
	CauseStartup = "startup"
	// CauseLost: a Redis store lost its keys under a running gateway:
	// restarted, flushed, failed over to a replica that missed writes.
	CauseLost = "lost"
)

// resets holds a store's latest Reset and tells an observer about each
// new one. The latest is the only one that matters: its At is the latest,
// so refusing what was created before it covers every earlier loss.
type resets struct {
	last    atomic.Pointer[Reset]
	onReset func(Reset)
}

// record makes r the latest reset and reports it.
func (s *resets) record(r Reset) {
	s.last.Store(&r)
	if s.onReset != nil {
		s.onReset(r)
	}
}

// adopt makes r the latest reset without reporting it: another replica
// detected it and reported it there (Redis canary, redis.go).
func (s *resets) adopt(r Reset) {
	if cur := s.last.Load(); cur == nil || r.At.After(cur.At) {
		s.last.Store(&r)
	}
}

// LastReset returns when the store last lost what it remembered, and
// whether that happened under running gateways (Reset.Live); a zero time
// if it never did. It is one atomic load, cheap enough for every request.
func (s *resets) LastReset() (at time.Time, live bool) {
	if r := s.last.Load(); r != nil {
		return r.At, r.Live
	}
	return time.Time{}, false
}
