package wss

import (
	"io"
	"net/textproto"
	"slices"

	"github.com/wssgw/wssgw/internal/mime"
)

// PackageAttachments returns a MIME package's attachments as the engines
// read them, leaving out the part named exclude ("" for none): the part
// that carried a trailing signature is the message's, not an attachment.
func PackageAttachments(p *mime.Package, exclude string) Attachments { return view{p, exclude} }

type view struct {
	p       *mime.Package
	exclude string
}

func (v view) IDs() []string {
	ids := make([]string, 0, len(v.p.Attachments))
	for _, part := range v.p.Attachments {
		if id := part.ContentID(); id != v.exclude {
			ids = append(ids, id)
		}
	}
	return slices.Clip(ids)
}

func (v view) Attachment(cid string) (Attachment, bool) {
	if cid == v.exclude {
		return nil, false
	}
	part, ok := v.p.Attachment(cid)
	if !ok {
		return nil, false // a typed nil would not compare equal to nil
	}
	return part, true
}

func (v view) Replace(cid string, h textproto.MIMEHeader, r io.Reader) error {
	return v.p.Replace(cid, h, r)
}
