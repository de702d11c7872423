package mime

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestB64Writer: the text is exactly encoding/base64's StdEncoding, padded
// and unbroken, whatever the write boundaries (RFC 4648 §4; XOP 1.0 §3).
func TestB64Writer(t *testing.T) {
	data, err := io.ReadAll(&patterned{n: 3*b64Chunk + 100})
	require.NoError(t, err)
	for _, tc := range []struct {
		name   string
		size   int
		splits []int
	}{
		{"ok/empty", 0, nil},
		{"ok/one-byte-padded-twice", 1, nil},
		{"ok/two-bytes-padded-once", 2, nil},
		{"ok/one-group", 3, nil},
		{"ok/held-byte-completed-later", 7, []int{1, 2, 4}},
		{"ok/single-bytes", 10, []int{1, 2, 3, 4, 5, 6, 7, 8, 9}},
		{"ok/chunk-edge", b64Chunk + 1, []int{b64Chunk - 1}},
		{"ok/many-chunks", len(data), []int{5, b64Chunk + 2, 2*b64Chunk + 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := encodeSplit(t, data[:tc.size], tc.splits)
			assert.Equal(t, base64.StdEncoding.EncodeToString(data[:tc.size]), got)
		})
	}
}

// TestB64WriterErrors: a failing destination is reported, and writing
// after Close fails instead of producing text after the padding.
func TestB64WriterErrors(t *testing.T) {
	boom := errors.New("boom")
	e := newB64Writer(&failWriter{n: 10, err: boom})
	_, err := e.Write(make([]byte, 300))
	require.ErrorIs(t, err, boom)
	require.ErrorIs(t, e.Close(), boom)

	var out bytes.Buffer
	e = newB64Writer(&out)
	_, err = e.Write([]byte("ab"))
	require.NoError(t, err)
	require.NoError(t, e.Close())
	_, err = e.Write([]byte("c"))
	require.Error(t, err, "fail/write-after-close")
	assert.Equal(t, "YWI=", out.String())
}

// FuzzB64Writer checks the encoder against encoding/base64 on arbitrary
// input cut at arbitrary points.
func FuzzB64Writer(f *testing.F) {
	f.Add([]byte("hello, world"), uint16(1), uint16(5))
	f.Add(bytes.Repeat([]byte{0xff}, 5000), uint16(4097), uint16(2))
	f.Fuzz(func(t *testing.T, data []byte, a, b uint16) {
		got := encodeSplit(t, data, []int{int(a), int(a) + int(b)})
		if want := base64.StdEncoding.EncodeToString(data); got != want {
			t.Fatalf("len %d split %d,%d: got %q, want %q", len(data), a, b, got, want)
		}
	})
}

// encodeSplit writes data in pieces cut at splits (clamped, ascending).
func encodeSplit(t testing.TB, data []byte, splits []int) string {
	var out bytes.Buffer
	e := newB64Writer(&out)
	last := 0
	for _, s := range append(splits, len(data)) {
		s = min(max(s, last), len(data))
		n, err := e.Write(data[last:s])
		require.NoError(t, err)
		require.Equal(t, s-last, n)
		last = s
	}
	require.NoError(t, e.Close())
	return out.String()
}

// patterned is n bytes of a repeating pattern, generated as it is read.
type patterned struct{ n, off int64 }

func (p *patterned) Read(b []byte) (int, error) {
	if p.off >= p.n {
		return 0, io.EOF
	}
	if rest := p.n - p.off; int64(len(b)) > rest {
		b = b[:rest]
	}
	for i := range b {
		b[i] = byte((p.off + int64(i)) * 7)
	}
	p.off += int64(len(b))
	return len(b), nil
}

// failWriter fails once it has taken n bytes.
type failWriter struct {
	n   int
	got int
	err error
}

func (w *failWriter) Write(p []byte) (int, error) {
	if w.got+len(p) > w.n {
		return 0, w.err
	}
	w.got += len(p)
	return len(p), nil
}
