package budget

import (
	"sync"
	"time"
)

// Acquire takes a DOM-engine worker, waiting up to the queue wait for one
// to free up, and reserves scratch bytes for its work; release gives both
// back. It fails with an *OverloadError when the wait runs out (ReasonQueue)
// or the scratch bytes do not fit (ReasonMemory). Waiters are served in
// arrival order, so a steady stream cannot starve an early one.
func (b *Budget) Acquire(scratch int64) (release func(), err error) {
	return b.acquire(scratch, true)
}

// TryAcquire is Acquire without the wait, for DOM-engine work that may be
// skipped but must not hold up its request: the template path's shadow
// check of a hit. It fails at once (ReasonQueue) when no worker is free or
// others are already waiting for one, so that a template hit never waits
// behind fresh-shape messages for a worker (issue 14).
func (b *Budget) TryAcquire(scratch int64) (release func(), err error) {
	return b.acquire(scratch, false)
}

func (b *Budget) acquire(scratch int64, wait bool) (release func(), err error) {
	giveBack, err := b.worker(wait)
	if err != nil {
		return nil, err
	}
	if err := b.reserve(scratch); err != nil {
		giveBack()
		return nil, err
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			b.release(scratch)
			giveBack()
		})
	}, nil
}

// worker takes a worker, waiting up to the queue wait if wait is set.
func (b *Budget) worker(wait bool) (release func(), err error) {
	b.mu.Lock()
	lim := b.lim
	if n, _ := b.limit(); n <= 0 || (b.busy < n && len(b.queue) == 0) {
		b.busy++
		b.mu.Unlock()
		return b.releaser(), nil
	}
	if !wait || lim.QueueWait <= 0 {
		defer b.mu.Unlock()
		return nil, b.queueFull()
	}
	ch := make(chan struct{})
	b.queue = append(b.queue, ch)
	b.mu.Unlock()
	t := time.NewTimer(lim.QueueWait)
	defer t.Stop()
	select {
	case <-ch:
		return b.releaser(), nil
	case <-t.C:
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, c := range b.queue {
		if c == ch {
			b.queue = append(b.queue[:i], b.queue[i+1:]...)
			return nil, b.queueFull()
		}
	}
	// Granted between the timer and the lock: the worker is ours.
	return b.releaser(), nil
}

// releaser gives a worker back once, however often it is called: at once,
// or after the share's cooldown for the time it was held (share.go).
func (b *Budget) releaser() func() {
	var once sync.Once
	start := b.clock()
	return func() {
		once.Do(func() {
			b.mu.Lock()
			cool := b.cooldown(b.clock().Sub(start))
			b.mu.Unlock()
			if cool > 0 {
				b.after(cool, b.done)
				return
			}
			b.done()
		})
	}
}

// queueFull is the refusal of a message that got no worker; b.mu is held.
func (b *Budget) queueFull() error {
	n, shared := b.limit()
	reason := ReasonQueue
	if shared {
		reason = ReasonShare
	}
	return &OverloadError{Reason: reason, Limit: int64(n), RetryAfter: b.lim.RetryAfter}
}

// done gives a worker back: to the oldest waiter if the limit allows,
// else to the pool.
func (b *Budget) done() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.busy--
	b.grantFree()
}

// grantFree hands workers to the oldest waiters while the limit allows
// (it may have risen: hits stopped, or a reload); b.mu is held.
func (b *Budget) grantFree() {
	for len(b.queue) > 0 {
		if n, _ := b.limit(); n > 0 && b.busy >= n {
			return
		}
		b.grant()
	}
}

// grant hands a worker to the oldest waiter; b.mu is held.
func (b *Budget) grant() {
	ch := b.queue[0]
	b.queue = b.queue[1:]
	b.busy++
	close(ch)
}
