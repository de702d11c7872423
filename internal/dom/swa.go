package dom

import (
	"bufio"
	"bytes"
	"crypto/subtle"
	"fmt"
	"io"
	"strings"

	"github.com/wssgw/wssgw/internal/c14n"
	"github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// isCID reports whether a Reference URI names an attachment.
func isCID(uri string) bool {
	return len(uri) >= 4 && strings.EqualFold(uri[:4], "cid:")
}

// swaReference checks one SwA Reference (WSS SwA Profile 1.1 §5.2): URI
// "cid:..." naming an attachment of the package, exactly one Transform,
// Attachment-Content-Signature-Transform or
// Attachment-Complete-Signature-Transform (§5.3.1, §5.3.2; any other chain
// is refused, so a cid: Reference can never reach a c14n or STR transform
// meant for same-document references), the digest over the transform's
// output, streamed from the part.
func (m *message) swaReference(sd *xmlscan.Document, r int, uri string) (*wss.AttachmentFact, error) {
	a, f, err := m.attachment(uri)
	if err != nil {
		return nil, err
	}
	transforms, dm, dv, err := referenceParts(sd, r)
	if err != nil {
		return nil, err
	}
	tr, err := swaTransform(sd, transforms)
	if err != nil {
		return nil, err
	}
	m.use(wss.UseC14N, tr)
	digestAlg := attrOf(sd, dm, "Algorithm")
	if err := m.allow(wss.UseDigest, digestAlg); err != nil {
		return nil, err
	}
	want, err := b64(string(sd.Text(dv, nil)))
	if err != nil {
		return nil, err
	}
	h, err := crypto.NewDigest(digestAlg)
	if err != nil {
		return nil, wss.Wrap(wss.ReasonAlgorithm, err, "DigestMethod")
	}
	if tr == trSwAComplete {
		if err := writeMIMEHeaders(h, a); err != nil {
			return nil, wss.Wrap(wss.ReasonMalformed, err, "attachment <%s> headers", f.CID)
		}
	}
	if err := m.swaContent(h, a); err != nil {
		return nil, wss.Wrap(wss.ReasonMalformed, err, "attachment <%s>", f.CID)
	}
	if subtle.ConstantTimeCompare(h.Sum(nil), want) != 1 {
		return nil, wss.Failf(wss.ReasonDigest, "digest of attachment <%s> does not match", f.CID)
	}
	return f, nil
}

// swaTransform returns the one SwA signature transform of a Reference.
func swaTransform(sd *xmlscan.Document, ts int) (string, error) {
	if ts < 0 {
		return "", wss.Failf(wss.ReasonAlgorithm, "an attachment Reference needs an SwA transform")
	}
	t := sd.FirstChild(ts)
	if t < 0 || sd.NextSibling(t) >= 0 || sd.Elements[t].Local != "Transform" || sd.Elements[t].Space != nsDS || sd.FirstChild(t) >= 0 {
		return "", wss.Failf(wss.ReasonAlgorithm, "an attachment Reference must have exactly one Transform")
	}
	alg := attrOf(sd, t, "Algorithm")
	if alg != trSwAContent && alg != trSwAComplete {
		return "", wss.Failf(wss.ReasonAlgorithm, "attachment Reference Transform %q", alg)
	}
	return alg, nil
}

// swaContent writes the content part of the SwA signature transforms
// (SwA §5.4.2), as WSS4J's AttachmentContentSignatureTransform does: XML
// media types (text/xml, application/xml, application/*+xml,
// image/*+xml) canonicalized with exclusive c14n without comments, other
// text/* types with line ends normalized to CR LF, anything else as is.
func (m *message) swaContent(w io.Writer, a wss.Attachment) error {
	ct := strings.ToLower(a.ContentType())
	switch {
	case isXMLType(ct):
		return m.swaXML(w, a)
	case strings.HasPrefix(ct, "text/"):
		return copyAttachment(&crlfWriter{w: w}, a)
	}
	return copyAttachment(w, a)
}

func isXMLType(ct string) bool {
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

// swaXML canonicalizes XML content. The part passes the same gate as the
// envelope (no DOCTYPE, no processing instruction, limits), so it is read
// into memory, bounded by the engine's buffer limit.
func (m *message) swaXML(w io.Writer, a wss.Attachment) error {
	data, err := m.readBounded(a)
	if err != nil {
		return err
	}
	var d xmlscan.Document
	if err := m.engine.scanner.Scan(data, &d); err != nil {
		return fmt.Errorf("XML attachment: %w", err)
	}
	return c14n.CanonicalizeTo(w, c14n.AlgExcC14N, &d, 0, nil)
}

// readBounded reads a whole attachment of at most the engine's buffer
// limit.
func (m *message) readBounded(a wss.Attachment) ([]byte, error) {
	limit := m.engine.bufferLimit
	if a.Size() > limit {
		return nil, wss.Failf(wss.ReasonStructure, "attachment of %d bytes exceeds the %d-byte limit", a.Size(), limit)
	}
	r, err := a.Open()
	if err != nil {
		return nil, fmt.Errorf("open attachment: %w", err)
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read attachment: %w", err)
	}
	if int64(len(data)) > limit {
		return nil, wss.Failf(wss.ReasonStructure, "attachment exceeds the %d-byte limit", limit)
	}
	return data, nil
}

func copyAttachment(w io.Writer, a wss.Attachment) error {
	r, err := a.Open()
	if err != nil {
		return fmt.Errorf("open attachment: %w", err)
	}
	defer r.Close()
	br := bufio.NewReaderSize(r, 32<<10)
	if _, err := br.WriteTo(w); err != nil {
		return fmt.Errorf("read attachment: %w", err)
	}
	return nil
}

// crlfWriter normalizes line ends to CR LF: a lone CR or a lone LF becomes
// CR LF, CR LF stays (SwA §5.4.1 for text types; WSS4J's CRLFOutputStream,
// whose state carries across writes).
type crlfWriter struct {
	w      io.Writer
	lastCR bool
}

var crlf = []byte("\r\n")

func (c *crlfWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if c.lastCR && p[0] == '\n' {
			p, c.lastCR = p[1:], false
			continue
		}
		i := bytes.IndexAny(p, "\r\n")
		if i < 0 {
			c.lastCR = false
			_, err := c.w.Write(p)
			return n, err
		}
		if _, err := c.w.Write(p[:i]); err != nil {
			return 0, err
		}
		if _, err := c.w.Write(crlf); err != nil {
			return 0, err
		}
		c.lastCR = p[i] == '\r'
		p = p[i+1:]
	}
	return n, nil
}
