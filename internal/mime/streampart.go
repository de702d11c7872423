package mime

import (
	"bytes"
	"fmt"
	"io"
	"net/textproto"
)

// StreamPart is one part of a package being read by a PartReader. Its
// content is valid until the next call to PartReader.Next.
type StreamPart struct {
	Header      textproto.MIMEHeader
	ContentID   string // without angle brackets; "" if the part has none
	ContentType string // as sent; "" if the part has none
	Root        bool   // the part named by start (or the first part)

	pr    *PartReader
	n     int64 // content bytes returned so far
	max   int64 // MaxRootSize or MaxPartSize
	avail int   // buffered bytes known to be content
	err   error // sticky; io.EOF at the delimiter
}

// Read reads the part's content. It returns io.EOF at the delimiter,
// ErrLimit past MaxPartSize (MaxRootSize for the root) or MaxTotalSize,
// and ErrTruncated if the input ends first.
func (sp *StreamPart) Read(p []byte) (int, error) {
	if sp.err != nil {
		return 0, sp.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	chunk, err := sp.chunk()
	if err != nil {
		return 0, err
	}
	n := copy(p, chunk)
	sp.consume(n)
	return n, nil
}

// WriteTo writes the rest of the content to w straight from the scan
// buffer (io.Copy uses it, saving a copy per byte).
func (sp *StreamPart) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for {
		chunk, err := sp.chunk()
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
		n, err := w.Write(chunk)
		sp.consume(n)
		total += int64(n)
		if err != nil {
			return total, err
		}
	}
}

// chunk returns the buffered bytes known to be content, scanning for the
// delimiter and reading more input when there are none.
func (sp *StreamPart) chunk() ([]byte, error) {
	if sp.err != nil {
		return nil, sp.err
	}
	if sp.avail == 0 {
		if err := sp.scan(); err != nil {
			sp.err = err
			return nil, err
		}
	}
	if sp.n+int64(sp.avail) > sp.max {
		sp.err = fmt.Errorf("%w: part <%s> larger than %s (%d bytes)", ErrLimit, sp.ContentID, sp.limitName(), sp.max)
		return nil, sp.err
	}
	s := sp.pr.s
	return s.buf[s.r : s.r+sp.avail], nil
}

func (sp *StreamPart) consume(n int) {
	sp.pr.s.skip(n)
	sp.avail -= n
	sp.n += int64(n)
}

func (sp *StreamPart) limitName() string {
	if sp.Root {
		return "MaxRootSize"
	}
	return "MaxPartSize"
}

// scan sets avail to the number of buffered bytes before the delimiter, or
// before a trailing partial match of it. It returns io.EOF when the
// delimiter starts the buffered data.
func (sp *StreamPart) scan() error {
	s, delim := sp.pr.s, sp.pr.delim
	for {
		d := s.data()
		if i := bytes.Index(d, delim); i >= 0 {
			if i == 0 {
				return io.EOF
			}
			sp.avail = i
			return nil
		}
		if n := len(d) - partialSuffix(d, delim); n > 0 {
			sp.avail = n
			return nil
		}
		if err := s.fill(); err != nil {
			return truncated(err, fmt.Sprintf("inside part <%s>", sp.ContentID))
		}
	}
}
