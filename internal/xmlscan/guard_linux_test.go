package xmlscan

import (
	"bytes"
	"syscall"
	"testing"
)

// guardedTail returns a slice of n bytes that ends where an unreadable
// page begins, with its capacity ending there too: a read past its end
// faults.
func guardedTail(t *testing.T, n int) []byte {
	t.Helper()
	page := syscall.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, 2*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skipf("mmap: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Munmap(mem) })
	if err := syscall.Mprotect(mem[page:], syscall.PROT_NONE); err != nil {
		t.Skipf("mprotect: %v", err)
	}
	return mem[page-n : page : page]
}

// TestKernelsStopAtTheEnd runs the sixteen- and 32-byte steps (nameRun,
// charsRun, valueRun, wordName, the end tag's words) and the whole gate
// over inputs of every length up to 100 that end where an unreadable page
// begins, with content that never stops a step early: a step that reads
// past the input faults (issue 14).
func TestKernelsStopAtTheEnd(t *testing.T) {
	for n := 0; n <= 100; n++ {
		g := guardedTail(t, n)
		copy(g, bytes.Repeat([]byte("a"), n))
		validateChars(g, 0)
		for p := 0; p <= n; p++ {
			scanName(g, p)
			valueEnd(g, p, '"')
		}
		if n >= 7 {
			// An element closed at the very end, and an attribute
			// value running up to it.
			name := bytes.Repeat([]byte("b"), (n-5)/2)
			for _, doc := range [][]byte{
				[]byte("<" + string(name) + "></" + string(name) + ">"),
				[]byte(`<b x="` + string(bytes.Repeat([]byte("v"), max(0, n-9))) + `"/>`),
			} {
				if len(doc) > n {
					continue
				}
				in := g[n-len(doc):]
				copy(in, doc)
				var d Document
				if err := Scan(in, &d); err != nil {
					t.Fatalf("Scan(%q) = %v", in, err)
				}
			}
		}
	}
}
