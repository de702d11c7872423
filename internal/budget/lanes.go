package budget

import (
	"math"
	"sync"
	"time"
)

// First-sight lanes (issue 14: "a bound on concurrent DOM work so fresh
// shapes cannot starve hits", and 10 % fresh shapes removing at most 10 %
// of the legitimate throughput). A fresh message costs 1.2–1.4 × a
// legitimate one end to end, so the DOM share (share.go) cannot keep the
// loss under 10 %: part of the flood must be refused, cheaply, before the
// DOM engine runs. The template engine knows before that run whether the
// message's shape was accepted before (its sightings) and which signer it
// claims (internal/template); a shape never accepted is a first sight and
// runs in a lane: the claimed signer's if the DOM engine has accepted a
// message of that signer before, else lane 0, which every unknown or
// missing claim shares, so that a flood inventing identities gets one
// lane, not one per identity.
//
// While template hits flow (share.go, hitWindow) and FirstSightShare is in
// (0, 1), each lane runs one message at a time, paced to duty =
// FirstSightShare × Procs of one CPU: a message that held its lane for d
// (wall time from EnterFirstSight to leave) keeps it closed d × (1/duty −
// 1) longer (no longer when duty ≥ 1). A message that finds its lane busy
// or cooling is refused at once with ReasonFirstSight: no wait, so that a
// shed costs next to nothing. An attacker holding one trusted key, or
// copying a known partner's claim, is held to that one lane; a partner
// rolling out a new stack under its own key keeps its lane free. Shapes
// accepted before and template hits never enter a lane.
//
// The cooldown is a deadline compared with the clock at the next entry,
// not a timer: nobody waits for a lane, so there is nothing to wake, and a
// lane whose deadline has passed and that is not busy carries no state.

// maxLanes bounds the lanes held: lanes are known signers (a bounded set
// in internal/template) and lane 0, so the bound is only reached by a
// partner population that large. When full, idle lanes are dropped; if
// none is idle, a message of a new lane is refused.
const maxLanes = 4096

// lanes is the first-sight lanes; its own mutex, so that a sweep of a full
// map never holds up the DOM workers' bookkeeping (b.mu).
type lanes struct {
	mu sync.Mutex
	// duty is FirstSightShare × Procs, the share of one CPU each lane may
	// use; 0: the lanes are off. retryAfter is the refusal's Retry-After.
	duty       float64
	retryAfter time.Duration
	m          map[uint64]*lane
	// noSweepBefore is, after a sweep of a full map freed nothing (at
	// sweptAt), the earliest time (Budget.since) a lane may be idle
	// again: until then a new lane is refused without another sweep.
	// Lowered by every leave.
	noSweepBefore, sweptAt int64
}

// lane is one lane's state: busy while a message runs in it, closed from
// `left` until `until` (Budget.since) after it left. gen tells one
// admission from the next, so that a late second call of an earlier
// leave ends nothing.
type lane struct {
	busy               bool
	gen                uint64
	start, left, until int64
}

// open reports whether l admits a message at now: not busy and not
// cooling. An instant before it was left is a clock stepped back
// (Budget.since): the deadline, set on the clock before the step, no
// longer says how long the lane has cooled, and the lane opens.
func (l *lane) open(now int64) bool {
	return !l.busy && (now >= l.until || now < l.left)
}

// configure applies the limits of a (re)configuration. Lanes held stay:
// a message admitted before a reload leaves its lane as it would have, a
// cooldown set before runs out; the new duty paces what leaves after it.
func (ls *lanes) configure(l Limits) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.duty = 0
	if l.FirstSightShare > 0 && l.FirstSightShare < 1 && l.Procs > 0 {
		ls.duty = l.FirstSightShare * float64(l.Procs)
	}
	ls.retryAfter = l.RetryAfter
}

// EnterFirstSight admits a first sight of a message shape to the DOM
// engine in lane (the claimed signer if known, else 0), or refuses it at
// once with an *OverloadError (ReasonFirstSight) when the lane is busy or
// cooling. leave ends the message's hold; calling it again does nothing.
// When no template hit flows or FirstSightShare is 0 or 1, every message
// is admitted.
func (b *Budget) EnterFirstSight(lane uint64) (leave func(), err error) {
	if !b.hitsFlowing() {
		return noLeave, nil
	}
	ls := &b.lanes
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.duty <= 0 {
		return noLeave, nil
	}
	now := b.since()
	l := ls.m[lane]
	switch {
	case l == nil:
		if l = ls.add(lane, now); l == nil {
			return nil, ls.refusal()
		}
	case !l.open(now):
		return nil, ls.refusal()
	}
	l.busy = true
	l.gen++
	l.start = now
	gen := l.gen
	return func() { b.leaveLane(l, gen) }, nil
}

func noLeave() {}

// leaveLane ends admission gen of l, closing the lane for its cooldown.
func (b *Budget) leaveLane(l *lane, gen uint64) {
	now := b.since()
	ls := &b.lanes
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if !l.busy || l.gen != gen {
		return
	}
	l.busy = false
	l.left = now
	l.until = now + int64(laneCooldown(time.Duration(now-l.start), ls.duty))
	ls.noSweepBefore = min(ls.noSweepBefore, l.until)
}

// laneCooldown is how long a lane stays closed after a message held it for
// d, so that it works duty of the time: d × (1/duty − 1).
func laneCooldown(d time.Duration, duty float64) time.Duration {
	if d <= 0 || duty <= 0 || duty >= 1 {
		return 0
	}
	return time.Duration(float64(d) * (1/duty - 1))
}

// add makes a new idle lane, dropping idle lanes if the map is full; nil
// if it is full of lanes in use. ls.mu is held.
func (ls *lanes) add(key uint64, now int64) *lane {
	if ls.m == nil {
		ls.m = make(map[uint64]*lane)
	}
	if len(ls.m) >= maxLanes {
		if now < ls.noSweepBefore && now >= ls.sweptAt {
			return nil
		}
		next := int64(math.MaxInt64)
		for k, l := range ls.m {
			switch {
			case l.open(now):
				delete(ls.m, k)
			case !l.busy:
				next = min(next, l.until)
			}
		}
		if len(ls.m) >= maxLanes {
			ls.noSweepBefore, ls.sweptAt = next, now
			return nil
		}
		ls.noSweepBefore = 0
	}
	l := &lane{}
	ls.m[key] = l
	return l
}

// refusal is the error of a message its lane refused; ls.mu is held.
func (ls *lanes) refusal() error {
	return &OverloadError{Reason: ReasonFirstSight, Limit: 1, RetryAfter: ls.retryAfter}
}
