package template

import (
	"math/rand/v2"
	"testing"
)

var byteSets = map[string]*byteSet{"base64": notBase64, "cid": notCID, "idTail": notIDTail, "special": special, "dateTime": notDateTime}

// TestNibbleTables checks each class's nibble tables against its table,
// byte by byte: the vector check must refuse exactly what the table
// refuses.
func TestNibbleTables(t *testing.T) {
	for name, s := range byteSets {
		t.Run("ok/"+name, func(t *testing.T) {
			if s.wide == nil {
				t.Fatal("no nibble tables: the class would lose its vector check")
			}
			for b := range 256 {
				if got, want := s.wide.lo[b&15]&s.wide.hi[b>>4] != 0, s.not[b] == 0; got != want {
					t.Fatalf("byte %#x: nibbles admit %v, table %v", b, got, want)
				}
			}
		})
	}
	t.Run("fail/nine rows", func(t *testing.T) {
		// Nine high nibbles, each admitting another low nibble: no
		// eight bits tell them apart.
		var not [256]byte
		for i := range not {
			not[i] = 1
		}
		for h := range 9 {
			not[h<<4|h] = 0
		}
		if nibblesOf(&not) != nil {
			t.Fatal("a set of nine rows got nibble tables")
		}
	})
}

// TestNoneWide checks none on values long enough for the vector check
// against the table: every refused byte of each class, at every offset
// (in a full block, in the overlapping last one, at both ends), must be
// found, and clean values of every length from 32 to 200 admitted.
func TestNoneWide(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for name, s := range byteSets {
		var good, bad []byte
		for b := range 256 {
			if s.not[b] == 0 {
				good = append(good, byte(b))
			} else {
				bad = append(bad, byte(b))
			}
		}
		for n := 32; n <= 200; n++ {
			v := make([]byte, n)
			for i := range v {
				v[i] = good[rng.IntN(len(good))]
			}
			if !none(v, s) {
				t.Fatalf("ok/%s: a clean value of %d bytes is refused", name, n)
			}
			for i := range n {
				w := append([]byte(nil), v...)
				w[i] = bad[rng.IntN(len(bad))]
				if none(w, s) {
					t.Fatalf("fail/%s: %#x at %d of %d is admitted", name, w[i], i, n)
				}
			}
		}
		for _, c := range bad { // every refused byte, at a block's edge
			w := make([]byte, 64)
			for i := range w {
				w[i] = good[i%len(good)]
			}
			w[31] = c
			if none(w, s) || noneTable(w, &s.not) {
				t.Fatalf("fail/%s: %#x at 31 is admitted", name, c)
			}
		}
	}
}

// FuzzNone compares none with the table on any input.
func FuzzNone(f *testing.F) {
	f.Add([]byte("MIIDazCCAlOgAwIBAgIUQ2bS8x6C+/wWbqrK8Vw7ZtUKfQ4wDQYJKoZIhvcNAQEL"))
	f.Add([]byte("MIIDazCCAlOgAwIBAgIUQ2bS8x6C+/wWbqrK8Vw7ZtUKfQ4wDQYJKoZIhvcNAQE<"))
	f.Fuzz(func(t *testing.T, v []byte) {
		for name, s := range byteSets {
			if got, want := none(v, s), noneTable(v, &s.not); got != want {
				t.Fatalf("%s: none %v, table %v on %q", name, got, want, v)
			}
		}
	})
}

func BenchmarkNone(b *testing.B) {
	v := make([]byte, 1300)
	for i := range v {
		v[i] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"[i%64]
	}
	b.Run("table", func(b *testing.B) {
		b.SetBytes(int64(len(v)))
		b.ReportAllocs()
		for b.Loop() {
			noneTable(v, &notBase64.not)
		}
	})
	b.Run("none", func(b *testing.B) {
		b.SetBytes(int64(len(v)))
		b.ReportAllocs()
		for b.Loop() {
			none(v, notBase64)
		}
	})
}
