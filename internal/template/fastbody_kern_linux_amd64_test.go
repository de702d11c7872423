package template

import (
	"bytes"
	"crypto/sha256"
	"syscall"
	"testing"
)

// guarded returns a copy of b that ends where a page without access
// begins: a read or write past its end faults; and a function that
// unmaps it (the test makes tens of thousands: kept to the end, they
// ran into the limit on mappings and the test skipped).
func guarded(t testing.TB, b []byte) ([]byte, func()) {
	t.Helper()
	ps := syscall.Getpagesize()
	n := (len(b) + ps - 1) / ps * ps
	mem, err := syscall.Mmap(-1, 0, n+ps, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mprotect(mem[n:], syscall.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	d := mem[n-len(b) : n : n]
	copy(d, b)
	return d, func() { syscall.Munmap(mem) }
}

// TestSibKernGuardPage: the AVX2 kernel stays inside data and its output
// buffer (fastbody_kern.go's bounds argument), with both ending where a
// page without access begins, data cut at every byte of the end of a
// list whose values and text cross 32- and 64-byte edges; and it agrees
// with runGeneric there. Hashing as it goes (kernHash, where the CPU has
// SHA-NI), it reads only the output it wrote, or the input it took, and
// its digest is SHA-256's of them.
func TestSibKernGuardPage(t *testing.T) {
	if !haveAVX2 {
		t.Skip("no AVX2")
	}
	edges := fastReplayEdges()
	runs := 0
	rooms := []int{48, 160, 4096}
	outs := make([][]byte, len(rooms)) // under a guard page each, reused
	for i, room := range rooms {
		var free func()
		outs[i], free = guarded(t, make([]byte, room))
		defer free()
	}
	for _, body := range []string{edges[0], edges[17], edges[40], edges[64]} {
		data, ks := kernsOf(t, body)
		end := len(data) - len(fastTail)
		for cut := end; cut > end-400 && cut > len(fastHead); cut-- {
			d, free := guarded(t, data[:cut])
			for _, k := range ks {
				for q := max(len(fastHead), cut-700); q < cut; q++ {
					if d[q] != '<' {
						continue
					}
					for ri, room := range rooms {
						out := outs[ri]
						n1, i1, o1 := k.runAVX2(d, q, cut, out, 3, 1<<30, 1<<20, 1<<20, true, nil)
						ref := make([]byte, room)
						n2, i2, o2 := k.runGeneric(d, q, cut, ref, 3, 1<<30, 1<<20, 1<<20, true)
						if n1 != n2 || i1 != i2 || o1 != o2 || !bytes.Equal(out[3:o1], ref[3:o2]) {
							t.Fatalf("cut %d from %d, room %d: avx2 %d %d %d, generic %d %d %d", cut, q, room, n1, i1, o1, n2, i2, o2)
						}
						if haveSHANI {
							guardHashed(t, k, d, q, cut, out, true)
							guardHashed(t, k, d, q, cut, out, false)
						}
						runs++
					}
				}
			}
			free()
		}
	}
	if runs < 1000 {
		t.Fatalf("only %d runs", runs)
	}
}

// guardHashed runs the kernel hashing as it goes, its output out under a
// guard page, and checks what it took and its digest.
func guardHashed(t *testing.T, k *sibKern, d []byte, q, cut int, out []byte, emit bool) {
	t.Helper()
	room := len(out)
	ref := make([]byte, room)
	n, in, o := k.runGeneric(d, q, cut, ref, 3, 1<<30, 1<<20, 1<<20, emit)
	sd := &shaNI{}
	sd.Reset()
	base, from, stop := d, q, in
	if emit && len(k.ops) > 0 {
		base, from, stop = out, 3, o
	}
	kh := &kernHash{s: &sd.s, hp: from}
	n3, i3, o3 := k.runAVX2(d, q, cut, out, 3, 1<<30, 1<<20, 1<<20, emit, kh)
	if n3 != n || i3 != in || o3 != o {
		t.Fatalf("cut %d from %d, room %d, emit %v, hashing: %d %d %d, generic %d %d %d", cut, q, room, emit, n3, i3, o3, n, in, o)
	}
	sd.n = uint64(kh.hp - from)
	sd.Write(base[kh.hp:stop])
	want := sha256.Sum256(base[from:stop])
	if emit && len(k.ops) > 0 {
		want = sha256.Sum256(ref[3:o])
	}
	if !bytes.Equal(sd.Sum(nil), want[:]) {
		t.Fatalf("cut %d from %d, room %d, emit %v: digest differs", cut, q, room, emit)
	}
}
