package template

import (
	"bytes"
	"crypto/sha256"
	"encoding"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/wssgw/wssgw/internal/xmlscan"
)

func newSHANI(t testing.TB) *shaNI {
	if !haveSHANI {
		t.Skip("no SHA-NI and AVX2 on this CPU")
	}
	d := &shaNI{}
	d.Reset()
	return d
}

// writeSplit writes p to d in pieces cut at random points.
func writeSplit(d *shaNI, p []byte, rng *rand.Rand) {
	for len(p) > 0 {
		n := 1 + rng.IntN(len(p))
		if rng.IntN(4) == 0 {
			n = min(len(p), 1+rng.IntN(70))
		}
		d.Write(p[:n])
		p = p[n:]
	}
}

// TestSHANIVectors: FIPS 180-2 appendix B's messages.
func TestSHANIVectors(t *testing.T) {
	d := newSHANI(t)
	for _, c := range []struct{ name, in, want string }{
		{"ok/empty", "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"ok/abc", "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{"ok/448-bit", "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
		{"ok/million-a", strings.Repeat("a", 1e6), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d.Reset()
			d.Write([]byte(c.in))
			if got := hex.EncodeToString(d.Sum(nil)); got != c.want {
				t.Fatalf("got %s, want %s", got, c.want)
			}
		})
	}
}

// TestSHANILengths: every length 0..4096, written whole and in random
// pieces, and summed twice (Sum leaves the digest as it is).
func TestSHANILengths(t *testing.T) {
	d := newSHANI(t)
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 4096)
	for k := range buf {
		buf[k] = byte(rng.Uint32())
	}
	for n := 0; n <= len(buf); n++ {
		want := sha256.Sum256(buf[:n])
		d.Reset()
		d.Write(buf[:n])
		if got := d.Sum(nil); !bytes.Equal(got, want[:]) {
			t.Fatalf("length %d whole: got %x, want %x", n, got, want)
		}
		d.Reset()
		writeSplit(d, buf[:n], rng)
		if got := d.Sum([]byte("x")); !bytes.Equal(got[1:], want[:]) || got[0] != 'x' {
			t.Fatalf("length %d split: got %x, want %x", n, got, want)
		}
		if got := d.Sum(nil); !bytes.Equal(got, want[:]) {
			t.Fatalf("length %d, second Sum: got %x, want %x", n, got, want)
		}
	}
}

// TestSHANIResume: a state marshaled by crypto/sha256 (a template's
// midstate) goes on in a shaNI.
func TestSHANIResume(t *testing.T) {
	d := newSHANI(t)
	rng := rand.New(rand.NewPCG(3, 4))
	buf := make([]byte, 1000)
	for k := range buf {
		buf[k] = byte(rng.Uint32())
	}
	for _, cut := range []int{0, 1, 63, 64, 65, 128, 500, 1000} {
		h := sha256.New()
		h.Write(buf[:cut])
		state, err := h.(encoding.BinaryMarshaler).MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if err := d.UnmarshalBinary(state); err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		d.Write(buf[cut:])
		if want := sha256.Sum256(buf); !bytes.Equal(d.Sum(nil), want[:]) {
			t.Fatalf("cut %d: digests differ", cut)
		}
	}
	for _, bad := range [][]byte{nil, []byte("sha\x03"), append([]byte("sha\x02"), make([]byte, shaMarshaled-4)...)} {
		if d.UnmarshalBinary(bad) == nil {
			t.Fatalf("fail/%q: accepted", bad)
		}
	}
}

func FuzzFastSHA256(f *testing.F) {
	f.Add([]byte("abc"), uint64(1))
	f.Add(bytes.Repeat([]byte{0x5a}, 200), uint64(7))
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		d := newSHANI(t)
		writeSplit(d, data, rand.New(rand.NewPCG(seed, seed>>1)))
		if want := sha256.Sum256(data); !bytes.Equal(d.Sum(nil), want[:]) {
			t.Fatalf("digests differ")
		}
	})
}

// BenchmarkSHANI: the digest against crypto/sha256 (which uses SHA-NI
// too on this CPU) on 16 KiB writes, the fast body's flush.
func BenchmarkSHANI(b *testing.B) {
	buf := make([]byte, 16<<10)
	b.Run("shaNI", func(b *testing.B) {
		d := newSHANI(b)
		b.ReportAllocs()
		b.SetBytes(int64(len(buf)))
		for b.Loop() {
			d.Write(buf)
		}
	})
	b.Run("crypto", func(b *testing.B) {
		h := sha256.New()
		b.ReportAllocs()
		b.SetBytes(int64(len(buf)))
		for b.Loop() {
			h.Write(buf)
		}
	})
}

// TestFastBodyKernHashed: lists the sibling kernel takes, with and
// without start tags to reorder, preceded by text that moves where the
// kernel's hashing starts relative to a block (an escaped '>' emits
// there, then 0 to 130 bytes and the first two items before the kernel
// starts; with short items, sometimes less than the digest's buffered
// block needs: alignInput's one sibling first), are handled, and hashed
// into SHA-NI's digest as c14n's form (fastVersusGate, which writes a
// few bytes first).
func TestFastBodyKernHashed(t *testing.T) {
	newSHANI(t)
	sc, err := xmlscan.NewScanner(xmlscan.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, item := range []string{`<r:I a="%s" b="2"><r:N>%s</r:N></r:I>`, `<r:I b="%s" a="2"><r:N>%s</r:N></r:I>`, `<r:I a="%s">%s</r:I>`} {
		for pad := range 131 {
			for _, n := range []int{3, 9, 40} {
				body := `<r:O xmlns:r="urn:r">x&gt;` + strings.Repeat(" ", pad)
				for i := range n {
					body += fmt.Sprintf(item, strings.Repeat("v", (i*7+pad)%23), strings.Repeat("t", (i*13)%41))
				}
				body += `</r:O>`
				if !fastVersusGate(t, sc, body, nil) {
					t.Fatalf("%q: not handled", body)
				}
			}
		}
	}
}
