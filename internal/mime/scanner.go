package mime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
)

// minBuffer is the scanner's buffer size unless a header block needs more.
const minBuffer = 64 << 10

// scanner is a fixed-size read buffer over the package bytes that counts
// what it reads against MaxTotalSize and checks ctx before every read.
// Unlike bufio.Reader it lets the part reader search the buffered bytes
// for the delimiter and hand out content without copying it first.
type scanner struct {
	src   io.Reader
	ctx   context.Context
	buf   []byte
	r, w  int   // unread bytes are buf[r:w]
	total int64 // bytes read from src
	max   int64
	err   error // sticky: io.EOF, or the wrapped read, limit or ctx error
}

func newScanner(ctx context.Context, src io.Reader, size int, max int64) *scanner {
	return &scanner{src: src, ctx: ctx, buf: make([]byte, size), max: max}
}

// data returns the unread bytes.
func (s *scanner) data() []byte { return s.buf[s.r:s.w] }

// skip consumes n unread bytes.
func (s *scanner) skip(n int) { s.r += n }

// fill reads more bytes into the buffer. It returns nil if at least one
// byte was added, else the sticky error (io.EOF at the end of the input).
func (s *scanner) fill() error {
	if s.err != nil {
		return s.err
	}
	if err := s.ctx.Err(); err != nil {
		s.err = fmt.Errorf("mime: reading the package: %w", err)
		return s.err
	}
	if s.r > 0 {
		s.w = copy(s.buf, s.buf[s.r:s.w])
		s.r = 0
	}
	if s.w == len(s.buf) {
		return errors.New("mime: internal error: scanner buffer full")
	}
	room := int64(len(s.buf) - s.w)
	if left := s.max - s.total; left < room {
		room = left
	}
	if room == 0 {
		return s.probe()
	}
	for range 100 {
		n, err := s.src.Read(s.buf[s.w : s.w+int(room)])
		s.w += n
		s.total += int64(n)
		if err != nil {
			s.setReadErr(err)
			if n > 0 {
				return nil
			}
			return s.err
		}
		if n > 0 {
			return nil
		}
	}
	s.setReadErr(io.ErrNoProgress)
	return s.err
}

// probe is called when MaxTotalSize bytes have been read and more are
// needed: one more byte means the package is too large.
func (s *scanner) probe() error {
	var one [1]byte
	n, err := io.ReadFull(s.src, one[:])
	switch {
	case n > 0:
		s.err = fmt.Errorf("%w: the package exceeds MaxTotalSize (%d bytes)", ErrLimit, s.max)
	case err != nil:
		s.setReadErr(err)
	}
	return s.err
}

// setReadErr records a read error. io.EOF stays bare so that the part
// reader can tell a clean end from a failure; anything else (a reset
// connection, http.MaxBytesError) is a truncated package that still wraps
// the cause.
func (s *scanner) setReadErr(err error) {
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		s.err = io.EOF
		return
	}
	s.err = fmt.Errorf("%w: %w", ErrTruncated, err)
}

// ensure fills until at least n bytes are buffered. n must not exceed the
// buffer size. It returns the sticky error if the input ends first.
func (s *scanner) ensure(n int) error {
	for s.w-s.r < n {
		if err := s.fill(); err != nil {
			return err
		}
	}
	return nil
}

// partialSuffix returns the length of the longest suffix of data that is a
// proper prefix of delim (a delimiter that may continue in the next read).
func partialSuffix(data, delim []byte) int {
	start := len(data) - len(delim) + 1
	if start < 0 {
		start = 0
	}
	for i := start; i < len(data); i++ {
		j := bytes.IndexByte(data[i:], delim[0])
		if j < 0 {
			return 0
		}
		i += j
		if bytes.HasPrefix(delim, data[i:]) {
			return len(data) - i
		}
	}
	return 0
}
