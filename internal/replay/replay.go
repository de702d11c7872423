package replay

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Store records keys for a bounded time.
type Store interface {
	// Seen reports whether key was already recorded and has not yet expired;
	// if it was not, it records it until expires. It is atomic: of two
	// concurrent calls with the same key exactly one gets false. On error,
	// replayed is true.
	Seen(ctx context.Context, key []byte, expires time.Time) (replayed bool, err error)
	// Close releases the store's resources. Seen fails after Close.
	Close() error
}

var (
	// ErrUnavailable is wrapped by every error that means the store could
	// not answer. The message must then be rejected: answering "not
	// replayed" without knowing would let replays through.
	ErrUnavailable = errors.New("replay store unavailable")

	// ErrExpired is returned for an expiry that has already passed. The
	// caller's timestamp checks should have rejected the message first, so
	// this points at a bug or a clock problem, not at an attack.
	ErrExpired = errors.New("replay expiry already passed")
)

// Preallocated so the rejecting paths, which an attacker can drive, do not
// allocate.
var (
	errExpired = fmt.Errorf("replay: %w", ErrExpired)
	errClosed  = fmt.Errorf("replay: store closed: %w", ErrUnavailable)
)

var (
	_ Store = (*Memory)(nil)
	_ Store = (*Redis)(nil)

	// Both can lose what they recorded (Reset): wss.Policy looks for
	// this method on its store.
	_ interface{ LastReset() (time.Time, bool) } = (*Memory)(nil)
	_ interface{ LastReset() (time.Time, bool) } = (*Redis)(nil)
)
