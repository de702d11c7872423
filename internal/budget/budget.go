package budget

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// ErrOverloaded is what every refusal matches with errors.Is.
var ErrOverloaded = errors.New("budget: overloaded")

// Reasons of a refusal: the values of the reason label of
// wssgw_overload_rejections_total and of the request log.
const (
	ReasonMemory = "memory"    // the in-flight body bytes would exceed the budget
	ReasonQueue  = "dom_queue" // no DOM-engine worker freed up within the queue wait
	// ReasonShare is ReasonQueue while the DOM engine was held to its CPU
	// share because template hits were flowing (share.go): the workers
	// the share leaves to hits were not given to the DOM engine.
	ReasonShare = "dom_share"
	// ReasonFirstSight is a message of a shape never accepted before,
	// refused at once because its lane (its claimed signer's, or the
	// lane of every unknown signer) was busy or cooling down while
	// template hits flowed (lanes.go).
	ReasonFirstSight = "first_sight"
)

// OverloadError is a refused reservation or a queue wait that ran out.
type OverloadError struct {
	Reason string
	// Want, Held and Limit are the bytes asked for, held by all requests
	// and allowed (ReasonMemory), or the workers (ReasonQueue).
	Want, Held, Limit int64
	// RetryAfter is the Retry-After the client gets.
	RetryAfter time.Duration
}

func (e *OverloadError) Error() string {
	switch e.Reason {
	case ReasonQueue:
		return fmt.Sprintf("budget: all %d DOM-engine workers busy, queue wait over", e.Limit)
	case ReasonShare:
		return fmt.Sprintf("budget: the DOM engine's CPU share (%d worker(s) while template hits flow) is in use, queue wait over", e.Limit)
	case ReasonFirstSight:
		return "budget: the signer's first-sight lane (a message shape never accepted before, while template hits flow) is busy or cooling down"
	}
	return fmt.Sprintf("budget: in-flight request bytes over budget: %d held + %d wanted > %d", e.Held, e.Want, e.Limit)
}

// Is makes every OverloadError match ErrOverloaded.
func (e *OverloadError) Is(target error) bool { return target == ErrOverloaded }

// Limits are the bounds. A zero Bytes or Workers means unbounded.
type Limits struct {
	// Bytes bounds the request body bytes held by all in-flight requests.
	Bytes int64
	// Workers bounds the messages on the DOM engine at once.
	Workers int
	// QueueWait is how long a message waits for a worker.
	QueueWait time.Duration
	// RetryAfter is sent with a refusal.
	RetryAfter time.Duration
	// Share is the fraction of Procs the DOM engine may use while
	// template hits flow (share.go); 0 or 1: no bound beyond Workers.
	Share float64
	// Procs is the CPUs the process may use (GOMAXPROCS).
	Procs int
	// FirstSightShare is the share of Procs each first-sight lane may use
	// while template hits flow (lanes.go): one message at a time per
	// lane, paced to FirstSightShare × Procs of one CPU; 0 or 1: no lanes.
	FirstSightShare float64
}

// Observer is told the bytes held and the budget whenever they change
// (the metrics gauges).
type Observer interface {
	MemoryHeld(bytes int64)
	MemoryBudget(bytes int64)
}

// Budget is the bound on in-flight bytes and DOM-engine workers. It is safe
// for concurrent use.
type Budget struct {
	mu    sync.Mutex
	lim   Limits
	held  int64
	busy  int
	queue []chan struct{} // waiting for a worker, oldest first
	obs   Observer
	// lastHit is when a template hit was last verified (NoteHit), in
	// nanoseconds since epoch (since): the share is in force while it is
	// recent.
	lastHit atomic.Int64
	// clock and after are time.Now and time.AfterFunc; tests replace
	// them to step the pacing (share.go) without sleeping.
	clock func() time.Time
	after func(d time.Duration, f func())
	// epoch is time.Now at New: clock's instants are read as durations
	// since it (since), monotonic in production.
	epoch time.Time
	// lanes are the first-sight lanes (lanes.go).
	lanes lanes
}

// New returns a Budget with limits l; obs may be nil.
func New(l Limits, obs Observer) *Budget {
	b := &Budget{obs: obs, clock: time.Now, after: func(d time.Duration, f func()) { time.AfterFunc(d, f) }, epoch: time.Now()}
	b.Reconfigure(l)
	return b
}

// Reconfigure applies new limits in place, for a configuration reload.
// What requests hold stays counted: a lower byte budget refuses new
// requests until enough of the old ones end; more workers wake queued
// messages at once, fewer take effect as workers finish. First-sight lanes
// keep their holds and cooldowns (lanes.go, configure).
func (b *Budget) Reconfigure(l Limits) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lim = l
	b.lanes.configure(l)
	b.grantFree()
	if b.obs != nil {
		b.obs.MemoryBudget(l.Bytes)
	}
}

// Held reports the bytes reserved by all leases.
func (b *Budget) Held() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.held
}

// reserve takes n more bytes, or none and an *OverloadError.
func (b *Budget) reserve(n int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.lim.Bytes > 0 && b.held+n > b.lim.Bytes {
		return &OverloadError{Reason: ReasonMemory, Want: n, Held: b.held, Limit: b.lim.Bytes, RetryAfter: b.lim.RetryAfter}
	}
	b.held += n
	b.observe()
	return nil
}

func (b *Budget) release(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.held -= n
	b.observe()
}

func (b *Budget) observe() {
	if b.obs != nil {
		b.obs.MemoryHeld(b.held)
	}
}

// since is the clock's now in nanoseconds since epoch. time.Now carries a
// monotonic reading and Sub uses it, so a step of the wall clock (NTP)
// moves neither a lane's deadline (lanes.go) nor the last hit (share.go);
// UnixNano would: a step back of an hour kept a lane closed for the hour,
// and a step forward while a message held its lane closed it for 1/duty
// − 1 times the step. A clock without a monotonic reading (tests' fake)
// may still step: the readers treat an instant "before" a recorded one as
// a step back (TestFirstSightLanesClockStep).
func (b *Budget) since() int64 { return int64(b.clock().Sub(b.epoch)) }
