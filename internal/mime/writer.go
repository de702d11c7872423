package mime

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	stdmime "mime"
)

// Writer returns the Content-Type and the body of a package for the
// backend: root (the plaintext envelope the gateway produced) as the root
// part, then the attachments in arrival order with their current (possibly
// replaced) content. Only Content-ID and Content-Type travel from the
// received headers, since no other header was verified; every part is
// sent with Content-Transfer-Encoding binary.
//
// The boundary is fresh and random (128 bits from crypto/rand), chosen
// after the content was received, so a sender cannot plant it inside an
// attachment.
func (p *Package) Writer(root []byte) (contentType string, w io.WriterTo) {
	pw := &packageWriter{p: p, root: root, boundary: "wssgw-" + randomHex()}
	pw.rootCID = p.Root.cid
	if pw.rootCID == "" {
		pw.rootCID = "root-" + randomHex() + "@wssgw"
	}
	params := map[string]string{
		"type":     p.Params["type"],
		"boundary": pw.boundary,
		"start":    "<" + pw.rootCID + ">",
	}
	if si, ok := p.Params["start-info"]; ok {
		params["start-info"] = si
	}
	return stdmime.FormatMediaType("multipart/related", params), pw
}

func randomHex() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

type packageWriter struct {
	p        *Package
	root     []byte
	boundary string
	rootCID  string
}

// WriteTo writes the package to w.
func (pw *packageWriter) WriteTo(w io.Writer) (int64, error) {
	cw := &countWriter{w: w}
	bw := bufio.NewWriterSize(cw, 32<<10)
	err := pw.write(bw)
	if err == nil {
		err = bw.Flush()
	}
	return cw.n, err
}

func (pw *packageWriter) write(bw *bufio.Writer) error {
	pw.header(bw, pw.rootCID, pw.p.Root.ctype)
	if _, err := bw.Write(pw.root); err != nil {
		return err
	}
	for _, a := range pw.p.Attachments {
		if _, err := fmt.Fprint(bw, "\r\n"); err != nil {
			return err
		}
		pw.header(bw, a.cid, a.ctype)
		if err := copyPart(bw, a); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(bw, "\r\n--%s--\r\n", pw.boundary)
	return err
}

// header writes a delimiter line and a part header. Errors surface in the
// next write to bw.
func (pw *packageWriter) header(bw *bufio.Writer, cid, ctype string) {
	fmt.Fprintf(bw, "--%s\r\nContent-ID: <%s>\r\n", pw.boundary, cid)
	if ctype != "" {
		fmt.Fprintf(bw, "Content-Type: %s\r\n", ctype)
	}
	fmt.Fprint(bw, "Content-Transfer-Encoding: binary\r\n\r\n")
}

func copyPart(w io.Writer, part *Part) error {
	rc, err := part.Open()
	if err != nil {
		return fmt.Errorf("mime: attachment <%s>: %w", part.cid, err)
	}
	defer rc.Close()
	n, err := io.Copy(w, rc)
	if err == nil && n != part.size {
		err = fmt.Errorf("mime: attachment <%s> changed size in the spool", part.cid)
	}
	return err
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}
