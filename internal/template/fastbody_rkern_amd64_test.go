package template

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"

	"github.com/wssgw/wssgw/internal/xmlscan"
)

// The adversarial review of the fused sibling kernel (issue 14): its
// fixed segments held in 32-byte chunks and a tail, the hoisted swap of
// two attributes, and the contract that it leaves the blocks it queued
// (and a block it began) to the caller. The fast pass's digest decides
// whether a signed Body is accepted, so each test compares with SHA-256
// of exclusive C14N's form (fastVersusGate) or with the kernel's
// definition (runGeneric), and can fail: each was run against the code
// broken on purpose (the report of branch h19-rkern lists the mutants).

// rkernItem is a list item whose fixed segments are long: its child's
// name is m bytes, so that the segment after the second value is 6+m
// bytes and the last one 11+m (32-byte chunks and a tail, kernChunk);
// its attributes' names are an and bn bytes, the first sorting after the
// second (the canonical form swaps them: sibKern.swap) unless keep.
func rkernItem(m, an, bn int, keep bool) string {
	child := "c" + strings.Repeat("h", m-1)
	a, b := "z"+strings.Repeat("a", an-1), "b"+strings.Repeat("b", bn-1)
	if keep {
		a, b = "a"+strings.Repeat("a", an-1), "z"+strings.Repeat("b", bn-1)
	}
	return `<r:I ` + a + `="%s" ` + b + `="%d"><r:` + child + `>%s</r:` + child + `></r:I>`
}

// rkernList is n items of rkernItem (values and texts of varied
// lengths); every odd-th item (odd > 0) has a value with a quote
// written as a reference, which no replay takes.
func rkernList(item string, n, odd, pad int) string {
	var b strings.Builder
	b.WriteString(`<r:O xmlns:r="urn:r">` + strings.Repeat(" ", pad))
	for i := range n {
		v := strings.Repeat("v", (i*5+pad)%37)
		if odd > 0 && i%odd == odd-1 {
			v += "&quot;q&quot;"
		}
		fmt.Fprintf(&b, item, v, i, strings.Repeat("t", (i*11)%45))
	}
	b.WriteString(`</r:O>`)
	return b.String()
}

// rkernNames are child name lengths whose segments (6+m and 11+m bytes)
// end at each side of the 32-byte chunks' edges.
var rkernNames = []int{1, 20, 21, 25, 26, 27, 52, 53, 57, 58, 59, 85, 90, 91, 120}

// TestSibKernLongFixed: lists whose fixed segments are 32k-1 to 32k+1
// bytes long (k 0 to 4) take the kernel (a program compiled) and give
// the kernel's definition's results, with each byte of the second
// item's markup changed; the AVX2 kernel compares every byte of every
// chunk (a mask short of a byte in a chunk or a tail is a tampered
// element name taken as the record's).
func TestSibKernLongFixed(t *testing.T) {
	if !haveAVX2 {
		t.Skip("no AVX2")
	}
	chunks := 0
	for _, m := range rkernNames {
		for _, names := range [][2]int{{1, 1}, {1, 40}, {33, 2}, {31, 32}} {
			item := rkernItem(m, names[0], names[1], false)
			body := rkernList(item, 3, 0, 0)
			data, ks := kernsOf(t, body)
			if len(ks) == 0 {
				t.Fatalf("%q: no program", body)
			}
			for _, k := range ks {
				for _, g := range k.segs {
					if g.kind == kernChunk {
						chunks++
					}
				}
				if !k.swap {
					t.Fatalf("%q: the swap not hoisted", body)
				}
			}
			kernDiffAll(t, data, ks)
			first := len(fastHead) + len(`<r:O xmlns:r="urn:r">`)
			s := first + len(fmt.Sprintf(item, "", 0, ""))
			e := s + len(fmt.Sprintf(item, strings.Repeat("v", 5), 1, strings.Repeat("t", 11)))
			for i := s; i < e; i++ {
				if data[i] == 'v' || data[i] == 't' || data[i] == '1' {
					continue // a value
				}
				d := bytes.Clone(data)
				d[i] ^= 0x01
				end := len(d) - len(fastTail)
				for _, k := range ks {
					for _, q := range []int{first, s} {
						kernDiff(t, k, d, q, end, 4096, kernLims[0], true)
						kernDiff(t, k, d, q, end, 4096, kernLims[0], false)
						kernDiff(t, k, d, q, end, 100, kernLims[0], true)
					}
				}
				rkernRefuses(t, ks, d, first, s, i)
			}
		}
	}
	if chunks == 0 {
		t.Fatal("no segment of 32 fixed bytes or more")
	}
}

// rkernRefuses fails unless the kernel, run from the list's first item,
// stops before the item at s whose markup byte i was changed: it may
// not take a sibling that is not the record's.
func rkernRefuses(t *testing.T, ks []*sibKern, d []byte, first, s, i int) {
	t.Helper()
	end := len(d) - len(fastTail)
	for _, k := range ks {
		out := make([]byte, 4096)
		if n, in, _ := k.runAVX2(d, first, end, out, 0, 1<<30, 1<<20, 1<<20, true, nil); in > s {
			t.Fatalf("byte %d of %q changed: the kernel took %d siblings to %d, past the changed one at %d", i-s, d[s:], n, in, s)
		}
	}
}

// TestFastBodyLongFixed: end to end, lists with long fixed segments, the
// swap with names of different lengths, values with a quote reference
// (odd items the kernel stops at), long enough to stop for room, into
// SHA-NI's digest after a few bytes and into a buffer (fastVersusGate):
// c14n's form and its SHA-256; with the pure-Go kernel (runGeneric, the
// code of other architectures) too. And a list with one item's name
// changed (well-formed, another element): the same.
func TestFastBodyLongFixed(t *testing.T) {
	sc, err := xmlscan.NewScanner(xmlscan.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T) {
		for _, m := range rkernNames {
			for _, c := range []struct {
				an, bn int
				keep   bool
				n, odd int
			}{{1, 40, false, 40, 0}, {33, 2, false, 9, 4}, {31, 32, true, 40, 7}, {2, 9, false, 400, 0}, {5, 1, false, 400, 33}} {
				item := rkernItem(m, c.an, c.bn, c.keep)
				pad := (m + c.an) % 64
				body := rkernList(item, c.n, c.odd, pad)
				if !fastVersusGate(t, sc, body, nil) {
					t.Fatalf("%q: not handled", body)
				}
				// One item's child renamed where the chunks meet.
				child := "c" + strings.Repeat("h", m-1)
				for _, j := range []int{0, 30, 31, 32, m - 1} {
					if j >= m {
						continue
					}
					alt := []byte(child)
					alt[j] = 'x'
					bad := rkernList(strings.ReplaceAll(item, child, string(alt)), 1, 0, 0)
					bad = strings.Replace(body, `</r:I>`, `</r:I>`+bad[len(`<r:O xmlns:r="urn:r">`):len(bad)-len(`</r:O>`)], 2)
					if !fastVersusGate(t, sc, bad, nil) {
						t.Fatalf("%q: not handled", bad)
					}
				}
			}
		}
	}
	t.Run("avx2", run)
	t.Run("generic", func(t *testing.T) {
		saved := haveAVX2
		haveAVX2 = false
		defer func() { haveAVX2 = saved }()
		run(t)
	})
}

// TestSibKernHashFromMark: the kernel hashing the input (no start tag to
// reorder) from a mark before its first sibling, at every offset of a
// block (the bytes the caller synced: replayKern's kh.hp = fb.mark), and
// stopping at each item of a list whose items differ: the blocks it
// hashed, then those it left, are SHA-256 of data[mark:in].
func TestSibKernHashFromMark(t *testing.T) {
	if !haveSHANI {
		t.Skip("no SHA-NI")
	}
	for _, m := range []int{1, 26, 58, 90} {
		item := rkernItem(m, 1, 3, true)
		body := rkernList(item, 60, 9, 0)
		data, ks := kernsOf(t, body)
		if len(ks) == 0 {
			t.Fatalf("%q: no program", body)
		}
		end := len(data) - len(fastTail)
		for _, k := range ks {
			if len(k.ops) != 0 {
				t.Fatalf("%q: attributes reordered", body)
			}
			for q := len(fastHead); q < end; q++ {
				if data[q] != '<' || data[q+1] == '/' {
					continue
				}
				for back := 0; back <= 130 && q-back >= len(fastHead); back += 1 + back/8 {
					for _, most := range []int{1, 2, 5, 1 << 30} {
						rkernHashFrom(t, k, data, q, q-back, end, most)
					}
				}
			}
		}
	}
}

func rkernHashFrom(t *testing.T, k *sibKern, data []byte, q, from, end, most int) {
	t.Helper()
	n, in, _ := k.runGeneric(data, q, end, nil, 0, most, 1<<20, 1<<20, false)
	d := &shaNI{}
	d.Reset()
	kh := &kernHash{s: &d.s, hp: from}
	n2, in2, _ := k.runAVX2(data, q, end, nil, 0, most, 1<<20, 1<<20, false, kh)
	if n2 != n || in2 != in {
		t.Fatalf("from %d (mark %d, max %d): hashing, %d siblings to %d; generic %d to %d", q, from, most, n2, in2, n, in)
	}
	if kh.hp < from || kh.hp > max(in, from) || (kh.hp-from)%64 != 0 {
		t.Fatalf("from %d (mark %d): hashed to %d, took to %d", q, from, kh.hp, in)
	}
	d.n = uint64(kh.hp - from)
	d.Write(data[kh.hp:max(in, from)])
	if want := sha256.Sum256(data[from:max(in, from)]); !bytes.Equal(d.Sum(nil), want[:]) {
		t.Fatalf("from %d (mark %d, max %d, %d siblings to %d, hashed to %d): digest differs", q, from, most, n, in, kh.hp)
	}
}
