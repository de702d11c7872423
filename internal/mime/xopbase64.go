package mime

import (
	"fmt"
	"io"
)

// EncodeXOP writes the base64 of r's content, which stands for an
// xop:Include in the XOP infoset (XOP 1.0 §3.2), in the two lexical forms a
// signer may have digested: one unbroken line (the canonical form; Apache
// Santuario with ignoreLineBreaks, wssgw's own signer) to line, and the
// MIME form (76-character lines separated by CR LF, which C14N renders
// "&#xD;\n"; Santuario's default XMLUtils.encodeToString) to lines. Either
// writer may be nil. The content is read once and never materialized: a
// part may be a spool file of a gigabyte. Both engines digest included
// parts through it.
func EncodeXOP(r io.Reader, line, lines io.Writer) error {
	var w []io.Writer
	var encs []io.WriteCloser
	if line != nil {
		encs = append(encs, newB64Writer(line))
	}
	if lines != nil {
		encs = append(encs, newB64Writer(&mimeLines{w: lines}))
	}
	for _, e := range encs {
		w = append(w, e)
	}
	if _, err := io.Copy(io.MultiWriter(w...), r); err != nil {
		return fmt.Errorf("mime: read attachment: %w", err)
	}
	for _, e := range encs {
		if err := e.Close(); err != nil {
			return err
		}
	}
	return nil
}

// mimeLines breaks base64 text into 76-character lines separated by the
// canonical form of CR LF, with no separator after the last line (Java's
// Base64.getMimeEncoder, RFC 2045 §6.8).
type mimeLines struct {
	w   io.Writer
	col int
}

const mimeLineLen = 76

var canonicalCRLF = []byte("&#xD;\n")

func (l *mimeLines) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if l.col == mimeLineLen {
			if _, err := l.w.Write(canonicalCRLF); err != nil {
				return 0, err
			}
			l.col = 0
		}
		k := min(mimeLineLen-l.col, len(p))
		if _, err := l.w.Write(p[:k]); err != nil {
			return 0, err
		}
		l.col += k
		p = p[k:]
	}
	return n, nil
}
