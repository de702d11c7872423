package template

import (
	"bytes"
	"testing"
)

// TestSibKernLongFixedGuardPage: TestSibKernGuardPage's bounds on lists
// whose fixed segments are 32-byte chunks and a tail (kernChunk): data
// cut at every byte of the list's end and ending where a page without
// access begins, the kernel run from each item. Each chunk is compared
// only when it starts before lim (fastbody_kern.go); one compared past
// it reads up to 32 bytes a chunk further, and takes a sibling that
// ends at lim after a chunk where runGeneric does not.
func TestSibKernLongFixedGuardPage(t *testing.T) {
	if !haveAVX2 {
		t.Skip("no AVX2")
	}
	runs := 0
	out, freeOut := guarded(t, make([]byte, 4096))
	defer freeOut()
	for _, m := range []int{21, 26, 53, 58, 85, 90, 120} {
		body := rkernList(rkernItem(m, 1, 33, false), 6, 0, m%7)
		data, ks := kernsOf(t, body)
		end := len(data) - len(fastTail)
		for cut := end; cut > end-260 && cut > len(fastHead); cut-- {
			d, free := guarded(t, data[:cut])
			for _, k := range ks {
				for q := len(fastHead); q < cut; q++ {
					if d[q] != '<' || q+1 < cut && d[q+1] == '/' {
						continue
					}
					ref := make([]byte, len(out))
					n1, i1, o1 := k.runAVX2(d, q, cut, out, 3, 1<<30, 1<<20, 1<<20, true, nil)
					n2, i2, o2 := k.runGeneric(d, q, cut, ref, 3, 1<<30, 1<<20, 1<<20, true)
					if n1 != n2 || i1 != i2 || o1 != o2 || !bytes.Equal(out[3:o1], ref[3:o2]) {
						t.Fatalf("name %d, cut %d from %d: avx2 %d %d %d, generic %d %d %d", m, cut, q, n1, i1, o1, n2, i2, o2)
					}
					if haveSHANI {
						guardHashed(t, k, d, q, cut, out, true)
						guardHashed(t, k, d, q, cut, out, false)
					}
					runs++
				}
			}
			free()
		}
	}
	if runs < 1000 {
		t.Fatalf("only %d runs", runs)
	}
}
