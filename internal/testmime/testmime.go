package testmime

import (
	"bytes"
	"io"
	"net/textproto"

	"github.com/wssgw/wssgw/internal/mime"
	"github.com/wssgw/wssgw/internal/wss"
)

// Part is an in-memory wss.Attachment. Tests change Data to tamper with it.
type Part struct {
	ID   string // Content-ID without < >
	Head textproto.MIMEHeader
	Data []byte
}

// NewPart is a part of content type ct whose header names its Content-ID.
func NewPart(id, ct string, data []byte) *Part {
	return &Part{ID: id, Head: textproto.MIMEHeader{"Content-Type": {ct}, "Content-Id": {"<" + id + ">"}}, Data: data}
}

func (p *Part) ContentID() string            { return p.ID }
func (p *Part) ContentType() string          { return p.Head.Get("Content-Type") }
func (p *Part) Header() textproto.MIMEHeader { return p.Head }
func (p *Part) Size() int64                  { return int64(len(p.Data)) }
func (p *Part) Open() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(p.Data)), nil }

// Parts is an in-memory wss.Attachments: Order is the package order,
// ByID the parts by Content-ID.
type Parts struct {
	Order []string
	ByID  map[string]*Part
}

// New holds parts in the order given.
func New(parts ...*Part) *Parts {
	a := &Parts{ByID: map[string]*Part{}}
	for _, p := range parts {
		a.Add(p)
	}
	return a
}

// FromPackage reads every attachment of pkg into memory.
func FromPackage(pkg *mime.Package) (*Parts, error) {
	a := New()
	for _, p := range pkg.Attachments {
		r, err := p.Open()
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			return nil, err
		}
		a.Add(&Part{ID: p.ContentID(), Head: p.Header(), Data: data})
	}
	return a, nil
}

// Add appends p to the package.
func (a *Parts) Add(p *Part) {
	a.Order = append(a.Order, p.ID)
	a.ByID[p.ID] = p
}

// Clone copies the parts' list; the contents are shared until replaced.
func (a *Parts) Clone() *Parts {
	c := &Parts{Order: append([]string(nil), a.Order...), ByID: make(map[string]*Part, len(a.ByID))}
	for k, v := range a.ByID {
		c.ByID[k] = v
	}
	return c
}

func (a *Parts) IDs() []string { return a.Order }

func (a *Parts) Attachment(cid string) (wss.Attachment, bool) {
	p, ok := a.ByID[cid]
	if !ok {
		return nil, false // not a typed nil
	}
	return p, true
}

// Replace stores the new content for cid, as the gateway's package does
// after decrypting an attachment.
func (a *Parts) Replace(cid string, h textproto.MIMEHeader, r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	a.ByID[cid] = &Part{ID: cid, Head: h, Data: data}
	return nil
}

var _ wss.Attachments = (*Parts)(nil)
