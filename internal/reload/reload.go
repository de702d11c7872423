package reload

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/trust"
)

// DefaultInterval is the polling interval when none is configured.
const DefaultInterval = 10 * time.Second

// Options configures a Reloader. Observer, when set, is called after
// every reload attempt with the reloader's name and the result (nil on
// success); use it to count reloads and failures.
type Options struct {
	Interval time.Duration
	Logger   *slog.Logger
	Observer func(name string, err error)
}

// Reloader holds material of type T loaded from files and reloads it when
// the files change. It polls (stat, then a content hash: this follows
// symlinks, so Kubernetes' atomic "..data" symlink swaps are seen, which
// inotify watches on the old target are not). Current is lock-free; a failed
// reload keeps the previous material.
type Reloader[T any] struct {
	name  string
	files []string
	load  func() (*T, error)
	opts  Options

	cur  atomic.Pointer[T]
	mu   sync.Mutex // serializes Check
	seen [sha256.Size]byte
}

// New loads the material once (an error here is fatal to the
// caller) and returns the reloader. Call Run to start polling.
func New[T any](name string, files []string, load func() (*T, error), o Options) (*Reloader[T], error) {
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	r := &Reloader[T]{name: name, files: files, load: load, opts: o}
	sum, err := r.fingerprint()
	if err != nil {
		return nil, err
	}
	v, err := load()
	if err != nil {
		return nil, err
	}
	r.seen = sum
	r.cur.Store(v)
	return r, nil
}

// NewKeySource is a Reloader for a local key pair.
func NewKeySource(name string, k crypto.KeyFileOptions, o Options) (*Reloader[crypto.KeyPair], error) {
	return New(name, k.Files(), func() (*crypto.KeyPair, error) { return crypto.LoadKeyPair(k) }, o)
}

// NewTrustSource is a Reloader for a trust store. Each reload builds a new
// trust.Store, so its verification cache starts empty.
func NewTrustSource(name string, t trust.Options, o Options) (*Reloader[trust.Store], error) {
	return New(name, t.Files(), func() (*trust.Store, error) { return trust.NewStore(t) }, o)
}

// Current returns the material in use. It never blocks.
func (r *Reloader[T]) Current() *T { return r.cur.Load() }

// Run polls every interval until ctx is done.
func (r *Reloader[T]) Run(ctx context.Context) {
	t := time.NewTicker(r.opts.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_, _ = r.Check()
		}
	}
}

// Check polls once: when the files changed since the last attempt it reloads
// and reports changed=true. On error the old material stays in use; the same
// broken content is not retried (and logged) again until it changes.
func (r *Reloader[T]) Check() (changed bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sum, err := r.fingerprint()
	if err == nil && sum == r.seen {
		return false, nil
	}
	if err == nil {
		r.seen = sum
		var v *T
		if v, err = r.load(); err == nil {
			r.cur.Store(v)
		}
	}
	r.report(err)
	return err == nil, err
}

func (r *Reloader[T]) report(err error) {
	if err != nil {
		r.opts.Logger.Warn("key material reload failed; keeping the previous version",
			"source", r.name, "reason", trust.Reason(err), "error", err)
	} else {
		r.opts.Logger.Info("key material reloaded", "source", r.name)
	}
	if r.opts.Observer != nil {
		r.opts.Observer(r.name, err)
	}
}

// fingerprint hashes name, size, mtime and content of every file.
func (r *Reloader[T]) fingerprint() ([sha256.Size]byte, error) {
	h := sha256.New()
	for _, f := range r.files {
		if err := hashFile(h, f); err != nil {
			return [sha256.Size]byte{}, err
		}
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum, nil
}

func hashFile(h io.Writer, name string) error {
	fh, err := os.Open(name)
	if err != nil {
		return fmt.Errorf("crypto: %v: %w", err, crypto.ErrLoad)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return fmt.Errorf("crypto: %v: %w", err, crypto.ErrLoad)
	}
	var meta [16]byte
	binary.BigEndian.PutUint64(meta[:8], uint64(st.Size()))
	binary.BigEndian.PutUint64(meta[8:], uint64(st.ModTime().UnixNano()))
	fmt.Fprintf(h, "%s\x00", name)
	h.Write(meta[:])
	if _, err := io.Copy(h, io.LimitReader(fh, 16<<20)); err != nil {
		return fmt.Errorf("crypto: %v: %w", err, crypto.ErrLoad)
	}
	return nil
}
