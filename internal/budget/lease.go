package budget

import (
	"io"
	"sync"
)

// Lease is the bytes one request holds. Its methods are safe for
// concurrent use; Release is idempotent.
type Lease struct {
	b    *Budget
	mu   sync.Mutex
	held int64
	done bool
}

// Lease starts an empty lease on b.
func (b *Budget) Lease() *Lease { return &Lease{b: b} }

// Reserve makes the lease hold at least n bytes in all: it reserves what
// is missing, or nothing and an *OverloadError.
func (l *Lease) Reserve(n int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done || n <= l.held {
		return nil
	}
	if err := l.b.reserve(n - l.held); err != nil {
		return err
	}
	l.held = n
	return nil
}

// Held is the bytes the lease holds.
func (l *Lease) Held() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.held
}

// Release gives back every byte the lease holds; later Reserves are no-ops,
// so a body still read after the request ended holds nothing.
func (l *Lease) Release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.done && l.held > 0 {
		l.b.release(l.held)
	}
	l.held, l.done = 0, true
}

// Reader returns r counting what it reads against the lease: after each
// read the lease holds at least the bytes read so far, up to limit (the
// most of this body that stays in memory; what a reader spools to disk
// beyond it holds none). A read over budget fails with the
// *OverloadError; the bytes already held stay held until Release.
func (l *Lease) Reader(r io.ReadCloser, limit int64) io.ReadCloser {
	return &leaseReader{ReadCloser: r, l: l, limit: limit}
}

type leaseReader struct {
	io.ReadCloser
	l     *Lease
	limit int64
	n     int64
}

func (r *leaseReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	r.n += int64(n)
	if rerr := r.l.Reserve(min(r.n, r.limit)); rerr != nil {
		return n, rerr
	}
	return n, err
}
