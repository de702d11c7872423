package wss

import (
	"context"
	"io"
	"net/textproto"
	"time"

	"github.com/wssgw/wssgw/internal/config"
)

// Attachment is one MIME part of an MTOM/SwA package (the gateway adapts
// internal/mime's Part to it).
type Attachment interface {
	ContentID() string // without < >
	ContentType() string
	Header() textproto.MIMEHeader
	Size() int64
	// Open returns a fresh reader each call; content may be on disk and
	// 1 GiB large.
	Open() (io.ReadCloser, error)
}

// Attachments are the parts of one package other than the root.
type Attachments interface {
	// IDs lists the Content-ID of every attachment, in package order: the
	// engine must account for each one (an attachment that nothing
	// references, or that no signature covers when one is required, is
	// rejected by Check).
	IDs() []string
	Attachment(cid string) (Attachment, bool)
	// Replace gives the backend new content for cid (a decrypted
	// attachment). Afterwards Attachment(cid) returns the new content, so
	// that a signature processed later (sign-then-encrypt) digests the
	// plaintext.
	Replace(cid string, header textproto.MIMEHeader, r io.Reader) error
}

// AttachmentEngine is an Engine for MTOM/SwA packages: the root part's
// bytes plus the attachments.
type AttachmentEngine interface {
	ProcessAttachments(data []byte, atts Attachments, p *Policy, now time.Time) (*Result, error)
}

// MaxBufferedAttachment bounds the attachment bytes an engine holds in
// memory at once: the ciphertext of an encrypted attachment (AES-GCM
// authenticates the whole ciphertext before releasing any plaintext, so it
// cannot stream), a CipherValue stored in an attachment (WSS4J
// storeBytesInAttachment), and XML content that SwA §5.4.2 canonicalizes.
// Larger parts are rejected; digests of plain attachment content stream
// and have no such bound.
const MaxBufferedAttachment = 64 << 20

// AttachmentFact is what the engine proved about one attachment.
type AttachmentFact struct {
	CID string
	// Signatures are indices into Result.Signatures of the signatures whose
	// digests covered the attachment's content: through an SwA Reference,
	// or through an xop:Include of the final document inside a covered
	// element (its digest was taken over the XOP infoset).
	Signatures []int
	XOP        bool // an xop:Include of the final document names it
	SwA        bool // an SwA ds:Reference (cid:) names it
	// Decrypted: an EncryptedData CipherReference named it and its content
	// was replaced by the plaintext (Attachments.Replace).
	Decrypted bool
	// Consumed: it held a CipherValue (xop:Include in xenc:CipherValue);
	// the ciphertext was decrypted into the document and the part must not
	// reach the backend.
	Consumed bool
}

// Referenced reports whether something in the message names the part.
func (f *AttachmentFact) Referenced() bool {
	return f.XOP || f.SwA || f.Decrypted || f.Consumed
}

// AttachmentSignedByTrusted reports whether a verified signature with a
// trusted X.509 signer covers attachment f (see Result.SignedByTrusted for why an HMAC
// signature keyed by an EncryptedKey does not count).
func (r *Result) AttachmentSignedByTrusted(f *AttachmentFact) bool {
	for _, k := range f.Signatures {
		if k >= 0 && k < len(r.Signatures) && r.Signatures[k].Signer != nil {
			return true
		}
	}
	return false
}

// checkAttachments holds every attachment to the policy: each one is
// referenced by the message (an unreferenced part is content no check
// looked at, smuggled past the policy: DESIGN.md §5.4), and when the
// policy wants a signature, each one that reaches the backend is covered
// by a trusted X.509 signature.
func (p *Policy) checkAttachments(r *Result) error {
	sign := p.Config.Has(config.RequireSignature)
	for _, part := range p.Signed {
		sign = sign || part == PartBody
	}
	for i := range r.Attachments {
		f := &r.Attachments[i]
		if !f.Referenced() {
			return Failf(ReasonStructure, "attachment <%s> is not referenced", f.CID)
		}
		if sign && !f.Consumed && !r.AttachmentSignedByTrusted(f) {
			return Failf(ReasonPolicy, "attachment <%s> is not signed", f.CID)
		}
	}
	return nil
}

// decryptedAttachments reports whether some attachment arrived encrypted.
func (r *Result) decryptedAttachments() bool {
	for i := range r.Attachments {
		if r.Attachments[i].Decrypted || r.Attachments[i].Consumed {
			return true
		}
	}
	return false
}

// VerifyAttachments is Verify for an MTOM/SwA package: data is the root
// part and atts the other parts. Decrypted attachments have been handed to
// atts.Replace when it returns without error; parts listed in
// res.Consumed must not be forwarded.
func (p *Policy) VerifyAttachments(ctx context.Context, e AttachmentEngine, data []byte, atts Attachments, now time.Time) (res *Result, forward []byte, err error) {
	if p.unsecured(data) {
		return nil, data, nil
	}
	res, err = e.ProcessAttachments(data, atts, p, now)
	return p.finish(ctx, res, err, now, false)
}
