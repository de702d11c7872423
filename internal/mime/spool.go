package mime

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

// spool stores part contents: in memory up to threshold bytes, beyond it in
// files of a private directory created on first use. os.MkdirTemp makes it
// mode 0700 and os.CreateTemp makes files 0600, so other local users can
// neither read attachments nor plant files in it.
type spool struct {
	parent    string
	dir       string // "" until the first file
	threshold int64
}

// store reads r to its end. It returns the content in mem, or in the file
// at path; on error nothing it created is left behind. size is r's length
// if known (Replace's plaintext), else negative: a known length sizes the
// memory buffer once, where bytes.Buffer's doubling allocated and copied
// about four times a 1 MiB part kept in memory and twice the threshold of
// a spooled one (BenchmarkSwAEncryptedVsFloor in internal/dom, issue 14).
// It only sizes the buffer: what r holds is read whatever it said.
func (s *spool) store(r io.Reader, size int64) (mem []byte, path string, _ int64, err error) {
	var b []byte
	if size >= 0 {
		b = make([]byte, 0, min(size, s.threshold+1)+bytes.MinRead)
	}
	buf := bytes.NewBuffer(b)
	n, err := buf.ReadFrom(io.LimitReader(r, s.threshold+1))
	if err != nil {
		return nil, "", 0, err
	}
	if n <= s.threshold {
		return buf.Bytes(), "", n, nil
	}
	f, err := s.create()
	if err != nil {
		return nil, "", 0, err
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("mime: spool: %w", cerr)
		}
		if err != nil {
			_ = os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(buf.Bytes()); err != nil {
		return nil, "", 0, fmt.Errorf("mime: spool: %w", err)
	}
	rest, err := io.Copy(f, r)
	if err != nil {
		return nil, "", 0, err
	}
	return nil, f.Name(), n + rest, nil
}

func (s *spool) create() (*os.File, error) {
	if s.dir == "" {
		dir, err := os.MkdirTemp(s.parent, "wssgw-mime-")
		if err != nil {
			return nil, fmt.Errorf("mime: spool directory: %w", err)
		}
		s.dir = dir
	}
	f, err := os.CreateTemp(s.dir, "part-")
	if err != nil {
		return nil, fmt.Errorf("mime: spool file: %w", err)
	}
	return f, nil
}

// remove deletes the spool directory and everything in it.
func (s *spool) remove() error {
	if s.dir == "" {
		return nil
	}
	err := os.RemoveAll(s.dir)
	s.dir = ""
	if err != nil {
		return fmt.Errorf("mime: removing the spool: %w", err)
	}
	return nil
}
