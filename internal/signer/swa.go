package signer

import (
	"fmt"
	"hash"
	"io"
	"net/textproto"

	"github.com/wssgw/wssgw/internal/swa"
)

// SwAPart is one attachment of an SwA package that Secure signs by a
// "cid:" Reference with the Attachment-Content-Signature-Transform (SwA
// Profile 1.1 §5), as WSS4J's receiver verifies it.
type SwAPart struct {
	ContentID string               // without < >
	Header    textproto.MIMEHeader // the part's header (its Content-Type picks the content rule)
	Open      func() (io.ReadCloser, error)
}

// addSwARefs appends one Reference per part, after the Body and Timestamp
// ones, where WSS4J puts them.
func addSwARefs(p *plan, parts []SwAPart) {
	for _, a := range parts {
		p.refs = append(p.refs, ref{cid: a.ContentID, transform: TransformSwAContent})
	}
}

// digestSwA digests part a through the SwA content transform (the
// verifier's internal/swa code), streamed from its storage; XML content is
// held up to maxXML to be canonicalized.
func digestSwA(h hash.Hash, a SwAPart, r *resolved) error {
	rc, err := a.Open()
	if err != nil {
		return fmt.Errorf("signer: attachment <%s>: %w", a.ContentID, err)
	}
	defer rc.Close()
	w, err := swa.NewWriter(h, TransformSwAContent, a.Header, swa.Options{Gate: r.Gate, MaxXML: r.swaMaxXML()})
	if err != nil {
		return fmt.Errorf("%w: %w", ErrEnvelope, err)
	}
	if _, err := io.Copy(w, rc); err != nil {
		return fmt.Errorf("signer: attachment <%s>: %w", a.ContentID, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("%w: SwA transform of <%s>: %w", ErrEnvelope, a.ContentID, err)
	}
	return nil
}

// swaMaxXML bounds an XML attachment held for canonicalization.
func (r *resolved) swaMaxXML() int64 {
	if r.SwAMaxXML > 0 {
		return r.SwAMaxXML
	}
	return 8 << 20
}
