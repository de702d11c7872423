package swa

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/textproto"
	"strings"
)

// The MIME headers the Attachment-Complete-Signature-Transform covers (SwA
// §5.3.2, §5.4.1 step 2), in the order they are written (§5.4.1 step 3:
// sorted by name, here in the spelling WSS4J writes them).
var headerNames = []string{"Content-Description", "Content-Disposition", "Content-ID", "Content-Location", "Content-Type"}

// ErrHeader is a MIME header the Complete transform cannot canonicalize.
var ErrHeader = errors.New("swa: malformed MIME header for the Attachment-Complete transform")

// WriteHeaders writes the canonical MIME headers of a part (SwA
// §5.4.1), byte for byte as WSS4J's AttachmentUtils.canonizeMimeHeaders:
// "Name:value" CR LF per header, no blank line after the last, and a
// missing Content-Type written as text/plain;charset="us-ascii" (§5.4.1
// step 2, RFC 2045 §5.2). Of a repeated header the first value counts.
// A value with a line end in it is refused (see below).
// RFC 2231 parameter continuations and charset-encoded parameters
// (name*) are refused rather than guessed at.
func WriteHeaders(w io.Writer, h textproto.MIMEHeader) error {
	var out strings.Builder
	for _, name := range headerNames {
		v, ok := headerValue(h, name)
		if !ok {
			if name == "Content-Type" {
				out.WriteString(`Content-Type:text/plain;charset="us-ascii"` + "\r\n")
			}
			continue
		}
		cv, err := canonicalHeader(name, v)
		if err != nil {
			return err
		}
		// The canonical form is one line a header. A line end left in a
		// value (a bare CR or LF, or one an RFC 2047 encoded word of
		// Content-Description decodes to) would let one header's value
		// spell the lines of others, so that two different header sets
		// digest alike: a Complete-covered header could be moved into
		// Content-Description and dropped without breaking the signature.
		// WSS4J writes such values as they are; no MIME parser hands out
		// a raw one, so refusing them costs no interoperability.
		if strings.ContainsAny(cv, "\r\n") {
			return fmt.Errorf("%w: line end in %s", ErrHeader, name)
		}
		out.WriteString(name + ":" + cv + "\r\n")
	}
	_, err := io.WriteString(w, out.String())
	return err
}

// headerValue finds a header by name: under textproto's canonical key
// (what MIME readers produce), else by case-insensitive match, since a
// hand-built map may spell the key otherwise (WSS4J matches names with
// equalsIgnoreCase).
func headerValue(h map[string][]string, name string) (string, bool) {
	if vs := h[textproto.CanonicalMIMEHeaderKey(name)]; len(vs) > 0 {
		return vs[0], true
	}
	for k, vs := range h {
		if strings.EqualFold(k, name) && len(vs) > 0 {
			return vs[0], true
		}
	}
	return "", false
}

// canonicalHeader applies §5.4.1 steps 5-11 to one value, per header.
func canonicalHeader(name, v string) (string, error) {
	v = unfold(v)
	switch name {
	case "Content-Description":
		d, err := new(mime.WordDecoder).DecodeHeader(v)
		if err != nil {
			return "", ErrHeader
		}
		return uncomment(d)
	case "Content-ID", "Content-Location":
		return uncomment(strings.TrimLeft(v, " \t"))
	}
	u, err := uncomment(strings.TrimLeft(v, " \t"))
	if err != nil {
		return "", err
	}
	return decodeParams(u)
}

// unfold removes each CR LF that a space or tab follows (RFC 5322 §2.2.3).
func unfold(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\r' && i+2 < len(v) && v[i+1] == '\n' && (v[i+2] == ' ' || v[i+2] == '\t') {
			i++
			continue
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// uncomment removes RFC 822 comments (parenthesized, nested) outside
// quoted strings (§5.4.1 step 9). An unterminated quote or comment is an
// error.
func uncomment(v string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '"':
			j := strings.IndexByte(v[i+1:], '"')
			if j < 0 {
				return "", ErrHeader
			}
			b.WriteString(v[i : i+j+2])
			i += j + 1
		case '(':
			depth := 0
			for ; i < len(v); i++ {
				if v[i] == '(' {
					depth++
				} else if v[i] == ')' {
					depth--
					if depth == 0 {
						break
					}
				}
			}
			if depth != 0 {
				return "", ErrHeader
			}
		default:
			b.WriteByte(v[i])
		}
	}
	return b.String(), nil
}
