package reload

import (
	"context"
	"crypto/sha256"
	"fmt"
	"time"
)

// Watch polls a set of files and reports when their content changes: the
// configuration file watch of a whole-configuration reload (issue 16).
// Like Reloader it polls and hashes instead of using inotify: the
// Kubernetes ConfigMap and Secret mounts change by swapping the "..data"
// symlink, which a watch on the old target never sees, while reading the
// path follows the symlink to the new content. A missing or unreadable
// file is a state of its own (its error is hashed), so a file that goes
// away and one that comes back both count as changes.
type Watch struct {
	files    func() []string
	interval time.Duration
	seen     [sha256.Size]byte
}

// NewWatch takes the current state of files() as seen. files is called at
// every poll, so the set can follow the configuration it belongs to.
func NewWatch(files func() []string, interval time.Duration) *Watch {
	if interval <= 0 {
		interval = DefaultInterval
	}
	w := &Watch{files: files, interval: interval}
	w.seen = w.fingerprint()
	return w
}

// Run calls changed after every poll that finds the files changed since
// the previous poll, until ctx is done. changed runs on Run's goroutine,
// so polls wait for it. The state taken before calling changed is the
// new baseline: a change made while changed runs is seen at the next poll.
func (w *Watch) Run(ctx context.Context, changed func()) {
	t := time.NewTicker(w.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if w.poll() {
				changed()
			}
		}
	}
}

// poll reports whether the files changed since the last poll.
func (w *Watch) poll() bool {
	sum := w.fingerprint()
	if sum == w.seen {
		return false
	}
	w.seen = sum
	return true
}

func (w *Watch) fingerprint() [sha256.Size]byte {
	h := sha256.New()
	for _, f := range w.files() {
		if err := hashFile(h, f); err != nil {
			fmt.Fprintf(h, "%s\x00error\x00%v\x00", f, err)
		}
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}
