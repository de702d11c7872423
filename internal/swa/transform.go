package swa

import (
	"fmt"
	"io"
	"net/textproto"
	"strings"

	"github.com/wssgw/wssgw/internal/xmlscan"
)

// The SwA Profile 1.1 transform URIs (§5.2, §5.3.1, §5.3.2, §5.5.1).
const (
	prefix              = "http://docs.oasis-open.org/wss/oasis-wss-SwAProfile-1.1#"
	ContentTransform    = prefix + "Attachment-Content-Signature-Transform"
	CompleteTransform   = prefix + "Attachment-Complete-Signature-Transform"
	CiphertextTransform = prefix + "Attachment-Ciphertext-Transform"
)

// Options bound the work on XML content.
type Options struct {
	// Gate scans XML content before it is canonicalized (no DOCTYPE, no
	// processing instruction, the configured limits); nil is xmlscan's
	// default configuration.
	Gate *xmlscan.Scanner
	// MaxXML bounds XML content, which is held in memory because C14N
	// needs the whole document. It must be positive: larger XML content
	// fails the transform.
	MaxXML int64
}

// NewWriter returns a writer that turns the content of a part with header
// h into the octets the SwA transform digests, and writes them to dst.
// For CompleteTransform the canonical MIME headers are written to dst
// first. Close must be called after the content: it canonicalizes XML
// content, which cannot be done before its end.
func NewWriter(dst io.Writer, transform string, h textproto.MIMEHeader, o Options) (io.WriteCloser, error) {
	switch transform {
	case CompleteTransform:
		if err := WriteHeaders(dst, h); err != nil {
			return nil, err
		}
	case ContentTransform:
	default:
		return nil, fmt.Errorf("swa: transform %q is not an SwA signature transform", transform)
	}
	ct, _ := headerValue(h, "Content-Type")
	return NewContentWriter(dst, ct, o), nil
}

// NewContentWriter returns the content half of the transforms (SwA §5.4.2)
// for a part of the given Content-Type, as WSS4J's
// AttachmentContentSignatureTransform does it: XML media types (text/xml,
// application/xml, application/*+xml, image/*+xml) canonicalized with
// exclusive C14N without comments, other text/* types with line ends
// normalized to CR LF (§5.4.1 via RFC 2046 §4.1.1), anything else (a
// missing Content-Type too) as it is.
func NewContentWriter(dst io.Writer, contentType string, o Options) io.WriteCloser {
	ct := strings.ToLower(strings.Trim(contentType, " \t"))
	switch {
	case isXML(ct):
		return &xmlWriter{dst: dst, o: o}
	case strings.HasPrefix(ct, "text/"):
		return &crlfWriter{w: dst}
	}
	return nopCloser{dst}
}

// isXML reports an XML media type, by the prefixes WSS4J matches.
func isXML(ct string) bool {
	if strings.HasPrefix(ct, "text/xml") || strings.HasPrefix(ct, "application/xml") {
		return true
	}
	for _, p := range []string{"application/", "image/"} {
		if rest, ok := strings.CutPrefix(ct, p); ok && strings.Contains(rest, "+xml") {
			return true
		}
	}
	return false
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
