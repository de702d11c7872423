package template

import (
	"bytes"
	"syscall"
	"testing"
)

// guarded returns a copy of b that ends where a page without access
// begins: a read or write past its end faults.
func guarded(t testing.TB, b []byte) []byte {
	t.Helper()
	ps := syscall.Getpagesize()
	n := (len(b) + ps - 1) / ps * ps
	mem, err := syscall.Mmap(-1, 0, n+ps, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { syscall.Munmap(mem) })
	if err := syscall.Mprotect(mem[n:], syscall.PROT_NONE); err != nil {
		t.Skip(err)
	}
	d := mem[n-len(b) : n : n]
	copy(d, b)
	return d
}

// TestSibKernGuardPage: the AVX2 kernel stays inside data and its output
// buffer (fastbody_kern.go's bounds argument), with both ending where a
// page without access begins, data cut at every byte of the end of a
// list whose values and text cross 32- and 64-byte edges; and it agrees
// with runGeneric there.
func TestSibKernGuardPage(t *testing.T) {
	if !haveAVX2 {
		t.Skip("no AVX2")
	}
	edges := fastReplayEdges()
	for _, body := range []string{edges[0], edges[17], edges[40], edges[64]} {
		data, ks := kernsOf(t, body)
		end := len(data) - len(fastTail)
		for cut := end; cut > end-400 && cut > len(fastHead); cut-- {
			d := guarded(t, data[:cut])
			for _, k := range ks {
				for q := max(len(fastHead), cut-700); q < cut; q++ {
					if d[q] != '<' {
						continue
					}
					for _, room := range []int{48, 160, 4096} {
						out := guarded(t, make([]byte, room))
						n1, i1, o1 := k.runAVX2(d, q, cut, out, 3, 1<<30, 1<<20, 1<<20, true, nil)
						ref := make([]byte, room)
						n2, i2, o2 := k.runGeneric(d, q, cut, ref, 3, 1<<30, 1<<20, 1<<20, true)
						if n1 != n2 || i1 != i2 || o1 != o2 || !bytes.Equal(out[3:o1], ref[3:o2]) {
							t.Fatalf("cut %d from %d, room %d: avx2 %d %d %d, generic %d %d %d", cut, q, room, n1, i1, o1, n2, i2, o2)
						}
					}
				}
			}
		}
	}
}
