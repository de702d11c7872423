package xmlscan

import (
	"sync"
	"testing"
)

// TestScanReadsOnlyItsInput: the gate reads data[:len(data)] only, never
// the capacity past it, which is the caller's (a buffer it goes on
// filling, perhaps in another goroutine). wordName reads sixteen bytes of
// a name's slice, up to its capacity, so state.qname caps that slice at
// the input's end. Under -race (make test), a read of the capacity while
// another goroutine writes it is reported as a race.
func TestScanReadsOnlyItsInput(t *testing.T) {
	const msg = `<a x="1"><bc y="2"/><d/></a>` // short names less than sixteen bytes from the end
	buf := make([]byte, len(msg), len(msg)+64)
	copy(buf, msg)
	spare := buf[len(buf):cap(buf)]
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			for i := range spare {
				spare[i] = 'z'
			}
		}
	}()
	var d Document
	for range 200 {
		if err := Scan(buf, &d); err != nil {
			t.Error(err)
			break
		}
	}
	close(stop)
	wg.Wait()
}
