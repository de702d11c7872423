package mime

import (
	"context"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// bigPackage returns an MTOM package with one attachment of size bytes,
// generated while it is read. The content is full of near-delimiters so
// that the scanner's slow path runs too.
func bigPackage(size int64, onChunk func()) io.Reader {
	head := "--B\r\n" + part(hdrRoot, envXOP) + "\r\n--B\r\n" + part("Content-Type: application/octet-stream\r\nContent-ID: <big@x>", "")
	return io.MultiReader(strings.NewReader(head), &patternReader{left: size, onChunk: onChunk}, strings.NewReader("\r\n--B--\r\n"))
}

var pattern = func() []byte {
	b := []byte(strings.Repeat("0123456789abcdef", 4096))
	for i := 1000; i+6 < len(b); i += 7919 {
		copy(b[i:], "\r\n--C\r\n")
	}
	return b
}()

type patternReader struct {
	left, off int64
	onChunk   func()
}

func (r *patternReader) Read(p []byte) (int, error) {
	if r.left == 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > r.left {
		p = p[:r.left]
	}
	n := copy(p, pattern[r.off%int64(len(pattern)):])
	r.left -= int64(n)
	if r.off += int64(n); r.onChunk != nil && r.off%(8<<20) < int64(n) {
		r.onChunk()
	}
	return n, nil
}

func BenchmarkRead(b *testing.B) {
	const size = 64 << 20
	lim := DefaultLimits()
	lim.SpoolDir = b.TempDir()
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		p, err := Read(context.Background(), bigPackage(size, nil), ctMTOM, lim)
		if err != nil {
			b.Fatal(err)
		}
		if err := p.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPartReader(b *testing.B) {
	const size = 64 << 20
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		pr, err := NewPartReader(bigPackage(size, nil), ctMTOM, DefaultLimits())
		if err != nil {
			b.Fatal(err)
		}
		for {
			sp, err := pr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if _, err := io.Copy(io.Discard, sp); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// TestReadMemoryBound reads a 256 MiB package generated on the fly and
// checks that the heap never grows by more than a few MiB: content above
// SpoolThreshold must go straight to disk. The heap is sampled every 8 MiB
// of input, while the reading is under way.
func TestReadMemoryBound(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 256 MiB to a temporary directory")
	}
	const size = 256 << 20
	lim := DefaultLimits()
	lim.SpoolDir = t.TempDir()

	var before, now runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var peak uint64
	samples := 0
	sample := func() {
		runtime.ReadMemStats(&now)
		peak = max(peak, now.HeapInuse)
		samples++
	}
	p, err := Read(context.Background(), bigPackage(size, sample), ctMTOM, lim)
	require.NoError(t, err)
	defer p.Close()
	sample()
	require.Equal(t, int64(size), p.Attachments[0].Size())
	require.True(t, p.Attachments[0].Spooled())
	require.Greater(t, samples, 30)
	growth := int64(peak) - int64(before.HeapInuse)
	t.Logf("heap growth %.1f MiB over %d samples", float64(growth)/(1<<20), samples)
	require.Less(t, growth, int64(4<<20), "heap grew by %d bytes reading %d", growth, size)
}
