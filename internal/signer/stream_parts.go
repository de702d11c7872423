package signer

import (
	"fmt"
	"io"
	"mime/multipart"
	"net/textproto"
	"slices"
	"strings"

	"github.com/wssgw/wssgw/internal/mime"
	"github.com/wssgw/wssgw/internal/swa"
)

// copyAttachments copies every attachment to mw, digesting it on the way.
func (rt *streamRoot) copyAttachments(mw *multipart.Writer) error {
	for n := 0; ; n++ {
		hdr, body, err := rt.parts.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("signer: reading the backend's package: %w", err)
		}
		if n == rt.s.o.MaxAttachments {
			return fmt.Errorf("%w: more than %d attachments", ErrPackage, n)
		}
		if err := rt.attachment(mw, hdr, body); err != nil {
			return err
		}
	}
	if rt.bodyHash != nil {
		if rt.xopNext < len(rt.includes) {
			return fmt.Errorf("%w: the part of xop:Include %q never came", ErrPackage, rt.includes[rt.xopNext])
		}
		rt.digests[0] = rt.bodyHash.Sum(nil)
	}
	return nil
}

// attachment copies one part and digests it per the attachment mode.
func (rt *streamRoot) attachment(mw *multipart.Writer, hdr textproto.MIMEHeader, body io.Reader) error {
	cid := strings.TrimSpace(hdr.Get("Content-ID"))
	cid = strings.TrimSuffix(strings.TrimPrefix(cid, "<"), ">")
	if cid == "" {
		// Neither xop:Include nor a SwA Reference can name it, and it
		// must not pass unsigned.
		return fmt.Errorf("%w: attachment without Content-ID", ErrPackage)
	}
	if rt.seen[cid] {
		return fmt.Errorf("%w: Content-ID %q occurs twice", ErrPackage, cid)
	}
	rt.seen[cid] = true
	// The SwA transforms digest the header as it goes out, which is the
	// one the client's verifier canonicalizes (Attachment-Complete).
	out := outHeader(hdr)
	dig, done, err := rt.digester(cid, out)
	if err != nil {
		return err
	}
	pw, err := mw.CreatePart(out)
	if err != nil {
		return fmt.Errorf("signer: writing the package: %w", err)
	}
	// The digest runs beside the copy (stream_pipe.go); a read, write or
	// digest error ends the copy before anything is signed.
	if err := copyDigest(pw, body, dig); err != nil {
		return fmt.Errorf("signer: copying attachment %q: %w", cid, err)
	}
	return done()
}

// digester returns where part cid's content is written to be digested,
// and what completes its digests. A part that an xop:Include of the Body
// names is digested into the Body's XOP infoset in every mode: that is
// what a receiver digests for a signed element holding xop:Include (XOP
// 1.0 §3). In the SwA modes only the other parts get their own cid:
// Reference: WSS4J inlines a signed element's xop:Includes before it
// checks any Reference, asking for each part with removeAttachments set
// (SignatureProcessor.setElementsOnContext), and CXF's attachment handler
// then takes the part out of the message, so a cid: Reference to it fails
// with "Attachment not found" (issue 15). The part is signed through the
// Body either way; its MIME headers, which only swa-complete covers, are
// not part of the XOP infoset.
func (rt *streamRoot) digester(cid string, hdr textproto.MIMEHeader) (io.Writer, func() error, error) {
	if rt.s.o.Attachments == AttachXOP || slices.Contains(rt.includes, cid) {
		return rt.xopDigester(cid)
	}
	return rt.swaDigester(cid, hdr)
}

// swaDigester digests the part for its SwA Reference.
func (rt *streamRoot) swaDigester(cid string, hdr textproto.MIMEHeader) (io.Writer, func() error, error) {
	transform := TransformSwAContent
	if rt.s.o.Attachments == AttachSwAComplete {
		transform = TransformSwAComplete
	}
	h := newDigest(rt.s.r.DigestAlgorithm)
	tw, err := rt.swaTransform(transform, hdr, h)
	if err != nil {
		return nil, nil, err
	}
	return packageWriter{tw}, func() error {
		if err := tw.Close(); err != nil {
			return fmt.Errorf("%w: SwA transform of %q: %w", ErrPackage, cid, err)
		}
		// SwA Profile 1.1 §5.1: URI="cid:..." with exactly one Transform.
		rt.p.refs = append(rt.p.refs, ref{cid: cid, transform: transform})
		rt.digests = append(rt.digests, h.Sum(nil))
		return nil
	}, nil
}

// xopDigester appends base64(part) to the Body's digest between the
// canonical pieces around its xop:Include (XOP 1.0 §3: the infoset holds
// the base64 of the part as the character content of the xop:Include's
// parent). The parts must come in xop:Include order: the Body is digested
// front to back and cannot wait for a part that comes later.
func (rt *streamRoot) xopDigester(cid string) (io.Writer, func() error, error) {
	k := rt.xopNext
	switch {
	case k == len(rt.includes):
		return nil, nil, fmt.Errorf("%w: attachment %q is named by no xop:Include of the Body", ErrPackage, cid)
	case rt.includes[k] != cid:
		return nil, nil, fmt.Errorf("%w: attachment %q comes before %q, out of xop:Include order", ErrPackage, cid, rt.includes[k])
	}
	enc := mime.NewBase64Writer(rt.bodyHash)
	return enc, func() error {
		if err := enc.Close(); err != nil {
			return err
		}
		rt.bodyHash.Write(rt.segs[k+1])
		rt.xopNext++
		return nil
	}, nil
}

// swaTransform is the writer that digests a part for its SwA Reference
// (internal/swa, the verifier's code): text content has its line ends
// normalized as it passes, XML content is held, bounded like the root
// part, and canonicalized when the part ends.
func (rt *streamRoot) swaTransform(transform string, hdr textproto.MIMEHeader, digest io.Writer) (io.WriteCloser, error) {
	w, err := swa.NewWriter(digest, transform, hdr, swa.Options{Gate: rt.s.r.Gate, MaxXML: rt.s.o.MaxRootSize})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPackage, err)
	}
	return w, nil
}

// packageWriter marks the transform's errors (an XML part over its bound)
// as the package's fault, apart from read errors of the same copy.
type packageWriter struct{ w io.Writer }

func (p packageWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	if err != nil {
		err = fmt.Errorf("%w: %w", ErrPackage, err)
	}
	return n, err
}
