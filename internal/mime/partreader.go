package mime

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/textproto"
)

// maxPadding bounds the transport padding (RFC 2046 §5.1.1 LWSP) after a
// delimiter.
const maxPadding = 256

// PartReader reads a multipart/related package one part at a time without
// buffering more than a fixed-size window. It enforces MaxParts,
// MaxHeaderBytes, MaxRootSize, MaxPartSize and MaxTotalSize, the syntax
// rules in the package documentation, unique Content-IDs, and the root
// part's type (the root is the part named by the start parameter, else the
// first part).
type PartReader struct {
	s        *scanner
	lim      Limits
	params   map[string]string
	delim    []byte // CRLF "--" boundary
	parts    int
	cur      *StreamPart
	seen     map[string]struct{} // lower-cased Content-IDs
	rootSeen bool
	err      error // sticky
}

// NewPartReader parses contentType (multipart/related with boundary, type
// and optionally start and start-info) and returns a reader of r's parts.
func NewPartReader(r io.Reader, contentType string, lim Limits) (*PartReader, error) {
	return newPartReader(context.Background(), r, contentType, lim)
}

func newPartReader(ctx context.Context, r io.Reader, contentType string, lim Limits) (*PartReader, error) {
	if err := lim.validate(); err != nil {
		return nil, err
	}
	params, err := packageParams(contentType)
	if err != nil {
		return nil, err
	}
	size := max(minBuffer, lim.MaxHeaderBytes+maxBoundary+maxPadding+16)
	return &PartReader{
		s:      newScanner(ctx, r, size, lim.MaxTotalSize),
		lim:    lim,
		params: params,
		delim:  []byte("\r\n--" + params["boundary"]),
		seen:   make(map[string]struct{}),
	}, nil
}

// Params returns the package's Content-Type parameters (lower-case keys;
// start without its angle brackets). The map must not be modified.
func (pr *PartReader) Params() map[string]string { return pr.params }

// Next skips what is left of the current part and returns the next one. It
// returns io.EOF after the close delimiter; an input that ends before it
// gives ErrTruncated. Errors are sticky.
func (pr *PartReader) Next() (*StreamPart, error) {
	if pr.err != nil {
		return nil, pr.err
	}
	sp, err := pr.next()
	if err != nil {
		pr.err = err
		if pr.cur != nil && pr.cur.err == nil {
			pr.cur.err = err
		}
		return nil, err
	}
	pr.cur = sp
	return sp, nil
}

func (pr *PartReader) next() (*StreamPart, error) {
	if pr.cur == nil {
		if err := pr.skipPreamble(); err != nil {
			return nil, err
		}
	} else {
		if _, err := io.Copy(io.Discard, pr.cur); err != nil {
			return nil, err
		}
		pr.s.skip(len(pr.delim)) // the part ended at a delimiter
	}
	closing, err := pr.delimiterTail()
	if err != nil {
		return nil, err
	}
	if closing {
		return nil, pr.finish()
	}
	pr.parts++
	if pr.parts > pr.lim.MaxParts {
		return nil, fmt.Errorf("%w: more than MaxParts (%d) parts", ErrLimit, pr.lim.MaxParts)
	}
	h, err := pr.readHeader()
	if err != nil {
		return nil, fmt.Errorf("part %d: %w", pr.parts, err)
	}
	sp, err := pr.newPart(h)
	if err != nil {
		return nil, fmt.Errorf("part %d: %w", pr.parts, err)
	}
	return sp, nil
}

// finish checks the package once its close delimiter has been read.
func (pr *PartReader) finish() error {
	if pr.parts == 0 {
		return fmt.Errorf("%w: the package has no parts", ErrMalformed)
	}
	if !pr.rootSeen {
		return fmt.Errorf("%w: no part has the start Content-ID <%s>", ErrMissingPart, pr.params["start"])
	}
	return io.EOF
}

// skipPreamble discards everything up to and including the first
// "--boundary", which may open the input or follow a CRLF.
func (pr *PartReader) skipPreamble() error {
	dash := pr.delim[2:]
	err := pr.s.ensure(len(dash))
	if d := pr.s.data(); bytes.HasPrefix(d, dash) {
		pr.s.skip(len(dash))
		return nil
	}
	seen := 0
	for err == nil {
		d := pr.s.data()
		if i := bytes.Index(d, pr.delim); i >= 0 {
			if seen+i > pr.lim.MaxHeaderBytes {
				break
			}
			pr.s.skip(i + len(pr.delim))
			return nil
		}
		n := len(d) - partialSuffix(d, pr.delim)
		seen += n
		pr.s.skip(n)
		if seen > pr.lim.MaxHeaderBytes {
			break
		}
		err = pr.s.fill()
	}
	if err != nil {
		return truncated(err, "before the first delimiter")
	}
	return fmt.Errorf("%w: preamble longer than MaxHeaderBytes (%d)", ErrLimit, pr.lim.MaxHeaderBytes)
}

// delimiterTail reads what follows "--boundary": "--" for the close
// delimiter, else transport padding and CRLF. Anything else is a line that
// merely starts with the boundary, which RFC 2046 §5.1.1 forbids.
func (pr *PartReader) delimiterTail() (closing bool, err error) {
	for {
		d := pr.s.data()
		if len(d) >= 2 && d[0] == '-' && d[1] == '-' {
			pr.s.skip(2)
			return true, nil
		}
		k := 0
		for k < len(d) && (d[k] == ' ' || d[k] == '\t') {
			k++
		}
		if k > maxPadding {
			return false, fmt.Errorf("%w: more than %d bytes of padding after a delimiter", ErrMalformed, maxPadding)
		}
		if k+1 < len(d) {
			if d[k] != '\r' || d[k+1] != '\n' {
				return false, fmt.Errorf("%w: a line starts with the boundary but is no delimiter", ErrMalformed)
			}
			pr.s.skip(k + 2)
			return false, nil
		}
		if k < len(d) && d[k] != '\r' && d[k] != '-' {
			return false, fmt.Errorf("%w: a line starts with the boundary but is no delimiter", ErrMalformed)
		}
		if err := pr.s.fill(); err != nil {
			return false, truncated(err, "after a delimiter")
		}
	}
}

var crlfcrlf = []byte("\r\n\r\n")

// readHeader reads one part's header block, at most MaxHeaderBytes
// including the blank line that ends it.
func (pr *PartReader) readHeader() (textproto.MIMEHeader, error) {
	max := pr.lim.MaxHeaderBytes
	for {
		d := pr.s.data()
		if len(d) >= 2 && d[0] == '\r' && d[1] == '\n' {
			pr.s.skip(2) // no header fields
			return textproto.MIMEHeader{}, nil
		}
		if i := bytes.Index(d, crlfcrlf); i >= 0 {
			if i+4 > max {
				break
			}
			h, err := parseHeader(d[:i+4])
			pr.s.skip(i + 4)
			return h, err
		}
		if len(d) >= max {
			break
		}
		if err := pr.s.fill(); err != nil {
			return nil, truncated(err, "in a part header")
		}
	}
	return nil, fmt.Errorf("%w: header block longer than MaxHeaderBytes (%d)", ErrLimit, max)
}

// newPart validates a part header and sets up its content reader.
func (pr *PartReader) newPart(h textproto.MIMEHeader) (*StreamPart, error) {
	cid, ctype, err := partInfo(h)
	if err != nil {
		return nil, err
	}
	if cid != "" {
		key := lowerASCII(cid)
		if _, dup := pr.seen[key]; dup {
			return nil, fmt.Errorf("%w: <%s>", ErrDuplicateID, cid)
		}
		pr.seen[key] = struct{}{}
	}
	sp := &StreamPart{Header: h, ContentID: cid, ContentType: ctype, pr: pr, max: pr.lim.MaxPartSize}
	if start, ok := pr.params["start"]; ok && cid == start || !ok && pr.parts == 1 {
		if err := checkRoot(pr.params, ctype); err != nil {
			return nil, err
		}
		sp.Root, sp.max, pr.rootSeen = true, pr.lim.MaxRootSize, true
	}
	return sp, nil
}

// truncated turns the end of the input into ErrTruncated; other errors
// (limits, ctx, a wrapped read error) pass through.
func truncated(err error, where string) error {
	if err == io.EOF {
		return fmt.Errorf("%w: the input ends %s", ErrTruncated, where)
	}
	return err
}
