package mime

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/textproto"
	"os"
	"strings"
)

// Package is a multipart/related package read by Read. It owns its spool
// files: call Close on every path once the request is done. A Package is
// not safe for concurrent use.
type Package struct {
	ContentType string            // the package's Content-Type as sent
	Params      map[string]string // its parameters, lower-case keys; start without brackets
	Root        *Part
	RootBytes   []byte  // the root part's content
	Attachments []*Part // every other part, in arrival order

	byID   map[string]*Part
	lim    Limits
	spool  spool
	closed bool
}

// Read reads a whole package from r: the root into memory (MaxRootSize),
// attachments into memory or spool files per SpoolThreshold. It returns
// only after the close delimiter. ctx is checked before every read from r.
// On error it has removed every file it created.
func Read(ctx context.Context, r io.Reader, contentType string, lim Limits) (*Package, error) {
	pr, err := newPartReader(ctx, r, contentType, lim)
	if err != nil {
		return nil, err
	}
	p := &Package{
		ContentType: contentType,
		Params:      pr.params,
		byID:        make(map[string]*Part),
		lim:         lim,
		spool:       spool{parent: lim.SpoolDir, threshold: lim.SpoolThreshold},
	}
	done := false
	defer func() {
		if !done { // an error, or a panic on its way up
			_ = p.Close()
		}
	}()
	for {
		sp, err := pr.Next()
		if err == io.EOF {
			done = true
			return p, nil
		}
		if err != nil {
			return nil, err
		}
		if err := p.add(sp); err != nil {
			return nil, fmt.Errorf("part %d: %w", pr.parts, err)
		}
	}
}

// add stores one part.
func (p *Package) add(sp *StreamPart) error {
	part := &Part{header: sp.Header, cid: sp.ContentID, ctype: sp.ContentType}
	if sp.Root {
		b, err := io.ReadAll(sp)
		if err != nil {
			return err
		}
		part.mem, part.size = b, int64(len(b))
		p.Root, p.RootBytes = part, b
		return nil
	}
	if part.cid == "" {
		// Attachments are only ever referenced by cid: (XOP, SwA).
		return fmt.Errorf("%w: an attachment has no Content-ID", ErrMalformed)
	}
	var err error
	if part.mem, part.path, part.size, err = p.spool.store(sp, -1); err != nil {
		return err
	}
	p.Attachments = append(p.Attachments, part)
	p.byID[part.cid] = part
	return nil
}

// IsXOP reports whether the package is MTOM/XOP (type application/xop+xml)
// rather than SwA.
func (p *Package) IsXOP() bool { return strings.EqualFold(p.Params["type"], TypeXOP) }

// Attachment returns the attachment whose Content-ID is cid (as returned
// by CIDFromURL; compared exactly). The root is not an attachment.
func (p *Package) Attachment(cid string) (*Part, bool) {
	part, ok := p.byID[cid]
	return part, ok
}

// Replace gives the attachment cid new content, such as the plaintext of
// an encrypted attachment, read from r (at most MaxPartSize bytes, spooled
// per SpoolThreshold). A non-nil header replaces the part's header; its
// Content-ID, if any, must be cid.
func (p *Package) Replace(cid string, header textproto.MIMEHeader, r io.Reader) error {
	if p.closed {
		return ErrClosed
	}
	part, ok := p.byID[cid]
	if !ok {
		return fmt.Errorf("%w: no attachment <%s>", ErrMissingPart, cid)
	}
	h, ctype := part.header, part.ctype
	if header != nil {
		var err error
		if h, ctype, err = replacementHeader(cid, header); err != nil {
			return err
		}
	}
	size := int64(-1)
	if l, ok := r.(interface{ Len() int }); ok { // a bytes.Reader: the decrypted plaintext
		size = min(int64(l.Len()), p.lim.MaxPartSize+1)
	}
	mem, path, size, err := p.spool.store(&limitedReader{r: r, left: p.lim.MaxPartSize, cid: cid}, size)
	if err != nil {
		return err
	}
	if part.path != "" {
		_ = os.Remove(part.path) // the directory goes with Close anyway
	}
	part.header, part.ctype, part.mem, part.path, part.size = h, ctype, mem, path, size
	return nil
}

// replacementHeader validates a header given to Replace and makes sure it
// names cid.
func replacementHeader(cid string, header textproto.MIMEHeader) (textproto.MIMEHeader, string, error) {
	h := maps.Clone(header)
	got, ctype, err := partInfo(h)
	if err != nil {
		return nil, "", err
	}
	if got != "" && got != cid {
		return nil, "", fmt.Errorf("%w: replacement header names <%s>, not <%s>", ErrMalformed, got, cid)
	}
	h.Set("Content-Id", "<"+cid+">")
	return h, ctype, nil
}

// Close removes every spool file and the spool directory. It is
// idempotent; after it, spooled Parts can no longer be opened.
func (p *Package) Close() error {
	if p.closed {
		return nil
	}
	p.closed = true
	return p.spool.remove()
}

// limitedReader fails with ErrLimit past left bytes (io.LimitReader would
// silently cut the content).
type limitedReader struct {
	r    io.Reader
	left int64
	cid  string
}

func (l *limitedReader) Read(b []byte) (int, error) {
	n, err := l.r.Read(b)
	l.left -= int64(n)
	if l.left < 0 {
		return 0, fmt.Errorf("%w: replacement for <%s> larger than MaxPartSize", ErrLimit, l.cid)
	}
	return n, err
}
