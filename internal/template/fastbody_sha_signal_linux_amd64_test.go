package template

import (
	"bytes"
	"crypto/sha256"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/wssgw/wssgw/internal/xmlscan"
)

// TestFastBodyKernHashedSignals: the kernel keeps the digest's state in
// X14 and X15 and a block's message schedule in X3 to X6 across its loop,
// and runs the SHA instructions after VZEROUPPER. Signals (SIGURG, the
// runtime's preemption signal, sent as fast as possible), garbage
// collections and other goroutines running the same template's fast body
// on the same core must change none of it: every digest is SHA-256 of
// the canonical form, every time.
func TestFastBodyKernHashedSignals(t *testing.T) {
	newSHANI(t)
	sc, err := xmlscan.NewScanner(xmlscan.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	var ref xmlscan.Document
	if err := sc.Scan([]byte(fastHead+fastTail), &ref); err != nil {
		t.Fatal(err)
	}
	ctx := newFastCtx(&ref, bodyOf(&ref), nil) // shared, as a template's
	lim := sc.Limits()
	type msg struct {
		data []byte
		end  int
		want [32]byte
	}
	var msgs []msg
	for _, reorder := range []bool{true, false} {
		for _, odd := range []int{0, 5} {
			data := []byte(fastHead + reviewItems(1200, odd, reorder, odd) + fastTail)
			end := len(data) - len(fastTail)
			canon := &bufHash{}
			if !(&fastBody{only: xmlscan.DefaultConfig().ElementOnly}).run(data, len(fastHead), end, ctx, &lim, canon) {
				t.Fatal("not handled")
			}
			msgs = append(msgs, msg{data, end, sha256.Sum256(canon.Bytes())})
		}
	}
	var stop atomic.Bool
	var signals atomic.Int64
	var bg sync.WaitGroup
	bg.Go(func() {
		pid := os.Getpid()
		for !stop.Load() {
			if syscall.Kill(pid, syscall.SIGURG) == nil {
				signals.Add(1)
			}
			if signals.Load()%256 == 0 {
				runtime.GC()
			}
		}
	})
	deadline := time.Now().Add(1500 * time.Millisecond)
	var wg sync.WaitGroup
	var runs atomic.Int64
	for g := range 4 {
		wg.Go(func() {
			fb := &fastBody{only: xmlscan.DefaultConfig().ElementOnly}
			d := &shaNI{}
			for k := g; time.Now().Before(deadline); k++ {
				m := &msgs[k%len(msgs)]
				d.Reset()
				if !fb.run(m.data, len(fastHead), m.end, ctx, &lim, d) {
					t.Error("not handled")
					return
				}
				if got := d.Sum(nil); !bytes.Equal(got, m.want[:]) {
					t.Errorf("message %d, run %d: digest %x, want %x", k%len(msgs), k, got, m.want)
					return
				}
				runs.Add(1)
			}
		})
	}
	wg.Wait()
	stop.Store(true)
	bg.Wait()
	t.Logf("%d runs, %d signals", runs.Load(), signals.Load())
	if runs.Load() == 0 || signals.Load() == 0 {
		t.Fatal("nothing ran")
	}
}
