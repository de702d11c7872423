package dom

import (
	"bufio"
	"bytes"
	"crypto/subtle"
	"fmt"
	"io"
	"strings"

	"github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/swa"
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
	if err := m.swaDigest(h, tr, a); err != nil {
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

// swaDigest streams the part through its SwA transform into h: for
// Attachment-Complete its canonical MIME headers first, then its canonical
// content (internal/swa, shared with the response signer). XML content is
// held in memory for C14N, bounded by the engine's buffer limit, and
// passes the engine's gate.
func (m *message) swaDigest(h io.Writer, tr string, a wss.Attachment) error {
	w, err := swa.NewWriter(h, tr, a.Header(), swa.Options{Gate: m.engine.scanner, MaxXML: m.engine.bufferLimit})
	if err != nil {
		return fmt.Errorf("headers: %w", err)
	}
	if err := copyAttachment(w, a); err != nil {
		return err
	}
	return w.Close()
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
	// One buffer of the part's size (and bytes.MinRead, so that reading
	// the end needs no growth): io.ReadAll grew its slice by doubling,
	// allocating and copying about twice the part, the largest cost above
	// the crypto floor of a 1 MiB encrypted attachment after the spool's
	// I/O (BenchmarkSwAEncryptedVsFloor, issue 14). Size only sizes the
	// buffer: a part longer than it said still reads whole, up to limit.
	buf := bytes.NewBuffer(make([]byte, 0, min(max(a.Size(), 0), limit)+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(r, limit+1)); err != nil {
		return nil, fmt.Errorf("read attachment: %w", err)
	}
	data := buf.Bytes()
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
