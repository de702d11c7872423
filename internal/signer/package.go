package signer

import (
	"io"

	"github.com/wssgw/wssgw/internal/mime"
)

// SetPackage makes the envelope the root part of pkg (issue 15): for MTOM
// it sets XOP to open pkg's attachments, for SwA it gives every attachment
// its cid: Reference, holding an XML part of at most maxXML bytes for
// canonicalization. Buffered response signing and egress requests both
// sign a package this way.
func (o *Options) SetPackage(pkg *mime.Package, maxXML int64) {
	if pkg.IsXOP() {
		o.XOP = func(cid string) (io.ReadCloser, bool, error) {
			part, ok := pkg.Attachment(cid)
			if !ok {
				return nil, false, nil
			}
			r, err := part.Open()
			return r, true, err
		}
		return
	}
	for _, a := range pkg.Attachments {
		o.SwA = append(o.SwA, SwAPart{ContentID: a.ContentID(), Header: a.Header(), Open: a.Open})
	}
	o.SwAMaxXML = maxXML
}
