package mime

import (
	"bytes"
	"io"
	"net/textproto"
	"os"
)

// Part is the root or one attachment of a Package. Its content is in memory
// or in a spool file owned by the Package.
type Part struct {
	header textproto.MIMEHeader
	cid    string
	ctype  string
	size   int64
	mem    []byte // content when path == ""
	path   string // spool file
}

// ContentID returns the Content-ID without its angle brackets ("" if none).
func (p *Part) ContentID() string { return p.cid }

// ContentType returns the Content-Type as sent, parameters included.
func (p *Part) ContentType() string { return p.ctype }

// Header returns the part's MIME header. It must not be modified.
func (p *Part) Header() textproto.MIMEHeader { return p.header }

// Size returns the content length in bytes.
func (p *Part) Size() int64 { return p.size }

// Spooled reports whether the content is in a spool file.
func (p *Part) Spooled() bool { return p.path != "" }

// Open returns a new reader over the content; the caller closes it. It
// fails once the Package is closed.
func (p *Part) Open() (io.ReadCloser, error) {
	if p.path != "" {
		return os.Open(p.path)
	}
	return io.NopCloser(bytes.NewReader(p.mem)), nil
}
