package swa

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/wssgw/wssgw/internal/c14n"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// ErrTooLarge is XML content over Options.MaxXML.
var ErrTooLarge = errors.New("swa: XML attachment exceeds the buffer limit")

var crlf = []byte("\r\n")

// crlfWriter normalizes line ends to CR LF: a lone CR or a lone LF becomes
// CR LF, CR LF stays (SwA §5.4.2 for text types; WSS4J's CRLFOutputStream,
// whose state carries across writes, so a CR LF split between two writes
// stays one line end). Each Write is one write to w, through a scratch
// buffer that grows to the largest chunk written.
type crlfWriter struct {
	w      io.Writer
	lastCR bool
	buf    []byte
}

func (c *crlfWriter) Write(p []byte) (int, error) {
	n := len(p)
	out := c.buf[:0]
	for len(p) > 0 {
		if c.lastCR && p[0] == '\n' {
			p, c.lastCR = p[1:], false
			continue
		}
		i := bytes.IndexAny(p, "\r\n")
		if i < 0 {
			out, c.lastCR = append(out, p...), false
			break
		}
		out = append(append(out, p[:i]...), crlf...)
		c.lastCR = p[i] == '\r'
		p = p[i+1:]
	}
	c.buf = out
	if _, err := c.w.Write(out); err != nil {
		return 0, err
	}
	return n, nil
}

func (c *crlfWriter) Close() error { return nil }

// xmlWriter collects XML content, bounded, and writes its exclusive C14N
// without comments on Close (SwA §5.4.2). The content passes the gate
// first, like every XML the gateway parses (DESIGN.md §5.1): an attachment
// is attacker-controlled input as much as the envelope is.
type xmlWriter struct {
	dst io.Writer
	o   Options
	buf []byte
}

func (x *xmlWriter) Write(p []byte) (int, error) {
	if int64(len(x.buf))+int64(len(p)) > x.o.MaxXML {
		return 0, fmt.Errorf("%w (%d bytes)", ErrTooLarge, x.o.MaxXML)
	}
	x.buf = append(x.buf, p...)
	return len(p), nil
}

func (x *xmlWriter) Close() error {
	gate := x.o.Gate
	var d xmlscan.Document
	var err error
	if gate != nil {
		err = gate.Scan(x.buf, &d)
	} else {
		err = xmlscan.Scan(x.buf, &d)
	}
	if err != nil {
		return fmt.Errorf("swa: XML attachment: %w", err)
	}
	if err := c14n.CanonicalizeTo(x.dst, c14n.AlgExcC14N, &d, 0, nil); err != nil {
		return fmt.Errorf("swa: XML attachment: %w", err)
	}
	x.buf = nil
	return nil
}
