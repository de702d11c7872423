package signer

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"runtime"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCopyDigest: the client and the digester see the same bytes in the
// same order, whatever the reader's chunking.
func TestCopyDigest(t *testing.T) {
	data, err := io.ReadAll(&patterned{n: 3*pipeBufSize + 12345})
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		r    func() io.Reader
		size int
	}{
		{"ok/empty", func() io.Reader { return bytes.NewReader(nil) }, 0},
		{"ok/one-byte", func() io.Reader { return bytes.NewReader(data[:1]) }, 1},
		{"ok/one-buffer", func() io.Reader { return bytes.NewReader(data[:pipeBufSize]) }, pipeBufSize},
		{"ok/more-buffers-than-the-ring", func() io.Reader { return bytes.NewReader(data) }, len(data)},
		{"ok/half-reads", func() io.Reader { return iotest.HalfReader(bytes.NewReader(data)) }, len(data)},
		{"ok/data-with-eof", func() io.Reader { return iotest.DataErrReader(bytes.NewReader(data)) }, len(data)},
		{"ok/small-reads", func() io.Reader { return iotest.OneByteReader(bytes.NewReader(data[:5000])) }, 5000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			h := sha256.New()
			require.NoError(t, copyDigest(&out, tc.r(), h))
			assert.Equal(t, string(data[:tc.size]), out.String())
			assert.Equal(t, sha256.Sum256(data[:tc.size]), [32]byte(h.Sum(nil)))
		})
	}
}

var (
	errRead   = errors.New("backend reset")
	errWrite  = errors.New("client gone")
	errDigest = errors.New("part over its bound")
)

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

// digesters is the number of copyDigest digest goroutines alive.
func digesters() int {
	buf := make([]byte, 1<<20)
	n := runtime.Stack(buf, true)
	return bytes.Count(buf[:n], []byte("(*digestPipe).digest("))
}

// countReader counts what was read from it.
type countReader struct {
	r io.Reader
	n int
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestCopyDigestFailure: an error on either side ends the copy with that
// error, the digester gets at most the piece whose write failed beyond
// what the client got, the copy stops reading soon after, and the digest
// goroutine is gone when copyDigest returns.
func TestCopyDigestFailure(t *testing.T) {
	size := 40 * pipeBufSize
	data, err := io.ReadAll(&patterned{n: int64(size)})
	require.NoError(t, err)
	for _, tc := range []struct {
		name   string
		r      io.Reader
		w, dig *failWriter
		want   error
	}{
		{"fail/read", iotest.TimeoutReader(bytes.NewReader(data)), &failWriter{n: size}, &failWriter{n: size}, iotest.ErrTimeout},
		{"fail/read-mid-part", io.MultiReader(bytes.NewReader(data[:5*pipeBufSize+7]), iotest.ErrReader(errRead)), &failWriter{n: size}, &failWriter{n: size}, errRead},
		{"fail/write", bytes.NewReader(data), &failWriter{n: 3 * pipeBufSize, err: errWrite}, &failWriter{n: size}, errWrite},
		{"fail/digest", bytes.NewReader(data), &failWriter{n: size}, &failWriter{n: 2 * pipeBufSize, err: errDigest}, errDigest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cr := &countReader{r: tc.r}
			err := copyDigest(tc.w, cr, tc.dig)
			require.ErrorIs(t, err, tc.want)
			assert.LessOrEqual(t, tc.dig.got, tc.w.got+pipeBufSize, "the digester is at most the piece being written ahead")
			assert.LessOrEqual(t, cr.n, (pipeDepth+4)*pipeBufSize+tc.w.got, "the copy stopped")
			// done is closed by the digester's deferred close, a moment
			// before its goroutine exits: wait for that exit, and count
			// digesters rather than all goroutines (a goroutine of an
			// earlier test may still be winding down).
			assert.Eventually(t, func() bool { return digesters() == 0 }, 5*time.Second, time.Millisecond, "the digester has returned")
		})
	}
}
