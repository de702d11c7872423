package signer

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/textproto"
	"time"

	"github.com/wssgw/wssgw/internal/swa"
)

// How a streamed response digests its attachments (StreamOptions.Attachments).
const (
	// AttachXOP digests the Body as its XOP infoset (XOP 1.0 §3): each
	// xop:Include replaced by the base64 of its part, so that the parts
	// must arrive in xop:Include order.
	AttachXOP = "xop"
	// AttachSwAContent adds one Reference per attachment with the
	// Attachment-Content-Signature-Transform (SwA Profile 1.1 §5.2); an
	// attachment an xop:Include of the Body names is signed through the
	// Body's XOP infoset instead (see streamRoot.digester).
	AttachSwAContent = "swa-content"
	// AttachSwAComplete adds one Reference per attachment with the
	// Attachment-Complete-Signature-Transform (MIME headers included),
	// apart from xop:Include'd ones as AttachSwAContent.
	AttachSwAComplete = "swa-complete"
)

// SwA Profile 1.1 §5.2 transform URIs.
const (
	TransformSwAContent  = swa.ContentTransform
	TransformSwAComplete = swa.CompleteTransform
)

// Content types of the trailing part (see Stream).
const (
	// SignaturePartType is the trailing part of the plain variant: the
	// children of ds:Signature as an XML fragment, to be parsed in the
	// namespace context of the ds:Signature whose xop:Include names it.
	SignaturePartType = "text/xml; charset=UTF-8"
	// CipherPartType is the trailing part of the strict variant: the raw
	// octets of the xenc:CipherValue that encrypts the ds:Signature.
	CipherPartType = "application/octet-stream"
)

// ErrPackage is a backend package that cannot be signed as it is: no SOAP
// root, an attachment out of xop:Include order or referenced by nothing,
// an XML attachment that fails the gate or its size bound, an unsupported
// transfer encoding. Errors wrapping it
// before Send has written anything can still become a fault; after that
// the response must be cut.
var ErrPackage = errors.New("signer: MIME package cannot be signed")

// Parts yields the parts of a multipart/related package in order. Next
// returns io.EOF after the close delimiter and another error for a package
// that ends early or is malformed. body yields the part's content with any
// Content-Transfer-Encoding removed.
type Parts interface {
	Next() (header textproto.MIMEHeader, body io.Reader, err error)
}

// StreamOptions say how a streamed package is signed.
type StreamOptions struct {
	// Options are the signer's key, algorithms, Timestamp, key reference
	// and SignatureConfirmation. EncryptFor is the recipient of the
	// strict variant's encrypted signature and must be nil otherwise.
	Options
	// Attachments is AttachXOP (default), AttachSwAContent or
	// AttachSwAComplete.
	Attachments string
	// StrictXOP encrypts the ds:Signature for EncryptFor, so that the
	// XOP-included trailing part is base64Binary content (of an
	// xenc:CipherValue), as XOP 1.0 §3 requires.
	StrictXOP bool
	// MaxRootSize bounds the root part, which is held in memory, and in
	// the SwA modes each XML attachment, which is held for C14N (SwA
	// Profile 1.1 §5.4.2); 0 is 10 MiB.
	MaxRootSize int64
	// MaxAttachments bounds the attachments (each one is a Reference in
	// SwA modes); 0 is 100.
	MaxAttachments int
}

// Stream signs an MTOM/SwA package while it is copied (DESIGN.md §6, seed
// 001). The root part goes out first, its Security header holding the
// Timestamp, the token reference and a ds:Signature whose content is an
// xop:Include of the last part (in the strict variant: an
// xenc:EncryptedData whose CipherValue is that xop:Include, preceded by
// its EncryptedKey). Each attachment is digested as it is written. When
// the last one is out, SignedInfo is complete; it is signed and its
// ds:Signature content (or ciphertext) is sent as the final part.
//
// A package that fails after the root part was sent gets no final part
// and no close delimiter: the caller must cut the response, so that a
// partial package can never carry a signature (never a signature over
// partial data).
type Stream struct {
	r        *resolved
	o        StreamOptions
	boundary string
	sigCID   string
	root     *streamRoot
	started  bool
	signTime time.Duration
}

// NewStream checks the options and picks the output boundary and the
// trailing part's Content-ID.
func NewStream(o StreamOptions) (*Stream, error) {
	r, err := o.resolve()
	if err != nil {
		return nil, err
	}
	switch o.Attachments {
	case "":
		o.Attachments = AttachXOP
	case AttachXOP, AttachSwAContent, AttachSwAComplete:
	default:
		return nil, fmt.Errorf("%w: attachments %q", ErrOptions, o.Attachments)
	}
	if o.StrictXOP != (o.EncryptFor != nil) {
		return nil, fmt.Errorf("%w: StrictXOP and EncryptFor go together (the recipient of the encrypted signature)", ErrOptions)
	}
	if o.MaxRootSize <= 0 {
		o.MaxRootSize = 10 << 20
	}
	if o.MaxAttachments <= 0 {
		o.MaxAttachments = 100
	}
	var rnd [32]byte
	if _, err := io.ReadFull(r.Rand, rnd[:]); err != nil {
		return nil, fmt.Errorf("signer: random boundary: %w", err)
	}
	return &Stream{
		r: r, o: o,
		boundary: "wssgw-" + hex.EncodeToString(rnd[:16]),
		sigCID:   "sig-" + hex.EncodeToString(rnd[16:]) + "@wssgw",
	}, nil
}

// Boundary is the boundary of the package Send writes, for the
// Content-Type of the response.
func (s *Stream) Boundary() string { return s.boundary }

// SignatureCID is the Content-ID of the trailing part.
func (s *Stream) SignatureCID() string { return s.sigCID }

// SignTime is the time spent on security work: the root part's digests,
// SignedInfo, the signature and its encryption; not the copying.
func (s *Stream) SignTime() time.Duration { return s.signTime }

// Started reports whether Send has written anything: from then on a
// failure can only cut the response.
func (s *Stream) Started() bool { return s.started }

// Sign is Prepare and Send.
func (s *Stream) Sign(w io.Writer, parts Parts) error {
	if err := s.Prepare(parts); err != nil {
		return err
	}
	return s.Send(w)
}

// Prepare reads the root part, checks it and computes the digests that do
// not depend on attachments. Nothing is written yet, so its errors can
// still be answered with a fault.
func (s *Stream) Prepare(parts Parts) error {
	hdr, body, err := parts.Next()
	if err != nil {
		return fmt.Errorf("%w: no root part: %w", ErrPackage, err)
	}
	s.root, err = newStreamRoot(s, parts, hdr, body)
	return err
}

// Send writes the signed package to w: the root part (flushed at once when
// w has a Flush method, so the time to first byte does not depend on the
// size), every attachment as it is read, and the signature part. On error
// the package is left without its final part and close delimiter.
func (s *Stream) Send(w io.Writer) error {
	if s.root == nil {
		return fmt.Errorf("%w: Send before Prepare", ErrOptions)
	}
	defer s.root.release()
	s.started = true
	mw := multipart.NewWriter(w)
	if err := mw.SetBoundary(s.boundary); err != nil {
		return fmt.Errorf("signer: boundary: %w", err)
	}
	if err := writePart(mw, s.root.header, s.root.bytes); err != nil {
		return err
	}
	flush(w)
	if err := s.root.copyAttachments(mw); err != nil {
		return err
	}
	start := time.Now()
	hdr, content, err := s.root.trailer()
	s.signTime += time.Since(start)
	if err != nil {
		return err
	}
	if err := writePart(mw, hdr, content); err != nil {
		return err
	}
	if err := mw.Close(); err != nil {
		return fmt.Errorf("signer: writing the package: %w", err)
	}
	flush(w)
	return nil
}

func writePart(mw *multipart.Writer, h textproto.MIMEHeader, content []byte) error {
	pw, err := mw.CreatePart(h)
	if err != nil {
		return fmt.Errorf("signer: writing the package: %w", err)
	}
	if _, err := pw.Write(content); err != nil {
		return fmt.Errorf("signer: writing the package: %w", err)
	}
	return nil
}

// flush pushes what was written to the client, for writers that buffer
// (http.ResponseWriter, bufio.Writer).
func flush(w io.Writer) {
	switch f := w.(type) {
	case interface{ Flush() error }:
		_ = f.Flush()
	case interface{ Flush() }:
		f.Flush()
	}
}
