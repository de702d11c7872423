package dom

import (
	"errors"
	"io"
	"mime"
	"sort"
	"strings"

	"github.com/wssgw/wssgw/internal/wss"
)

// The MIME headers the Attachment-Complete-Signature-Transform covers (SwA
// §5.3.2, §5.4.1 step 2), in the order they are written (§5.4.1 step 3:
// sorted by name, here in the spelling WSS4J writes them).
var swaHeaderNames = []string{"Content-Description", "Content-Disposition", "Content-ID", "Content-Location", "Content-Type"}

var errHeader = errors.New("dom: malformed MIME header for the SwA transform")

// writeMIMEHeaders writes the canonical MIME headers of a part (SwA
// §5.4.1), byte for byte as WSS4J's AttachmentUtils.canonizeMimeHeaders:
// "Name:value" CR LF per header, no blank line after the last, and a
// missing Content-Type written as text/plain;charset="us-ascii" (§5.4.1
// step 2, RFC 2045 §5.2). Of a repeated header the first value counts.
// RFC 2231 parameter continuations and charset-encoded parameters
// (name*) are refused rather than guessed at.
func writeMIMEHeaders(w io.Writer, a wss.Attachment) error {
	h := a.Header()
	var out strings.Builder
	for _, name := range swaHeaderNames {
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
		out.WriteString(name + ":" + cv)
		if !strings.HasSuffix(cv, "\r\n") {
			out.WriteString("\r\n")
		}
	}
	_, err := io.WriteString(w, out.String())
	return err
}

// headerValue finds a header by case-insensitive name: the map's keys may
// or may not be in textproto's canonical form.
func headerValue(h map[string][]string, name string) (string, bool) {
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
			return "", errHeader
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
				return "", errHeader
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
				return "", errHeader
			}
		default:
			b.WriteByte(v[i])
		}
	}
	return b.String(), nil
}

// caseless are the parameters whose values are lower-cased (§5.4.1 step
// 10).
var caseless = map[string]bool{"charset": true, "creation-date": true, "filename": true,
	"modification-date": true, "padding": true, "read-date": true, "size": true, "type": true}

// decodeParams canonicalizes a Content-Type or Content-Disposition value
// (§5.4.1 steps 10-11) as WSS4J's decodeRfc2184: without ';' the value is
// kept as is; otherwise the type is lower-cased, parameter names
// lower-cased and sorted, values quoted, written "type;name=value..."
// without spaces.
func decodeParams(v string) (string, error) {
	if !strings.Contains(v, ";") {
		return v, nil
	}
	parts := strings.Split(v, ";")
	for len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1] // Java's String.split drops trailing empties
	}
	params := map[string]string{}
	for _, p := range parts[1:] {
		name, val, ok := strings.Cut(p, "=")
		name, val = strings.ToLower(javaTrim(name)), javaTrim(val)
		if !ok || val == "" || strings.Contains(name, "*") {
			return "", errHeader
		}
		if caseless[name] {
			val = strings.ToLower(val)
		}
		params[name] = unquoteInner(quote(val))
	}
	names := make([]string, 0, len(params))
	for n := range params {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString(strings.ToLower(parts[0]))
	for _, n := range names {
		b.WriteString(";" + n + "=" + params[n])
	}
	return b.String(), nil
}

// javaTrim is Java's String.trim: it strips every byte <= ' '.
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// quote wraps v in double quotes, completing a quote at either end.
func quote(v string) string {
	start, end := v[0] == '"', v[len(v)-1] == '"'
	switch {
	case start && end:
		return v
	case !start && !end:
		return `"` + v + `"`
	case !start:
		return `"` + v
	}
	return v + `"`
}

// unquoteInner escapes the double quotes inside a quoted value and drops
// backslashes that escape anything else, keeping the enclosing quotes: a
// byte-level port of WSS4J's unquoteInnerText.
func unquoteInner(t string) string {
	var b strings.Builder
	n := len(t)
	for i := 0; i < n-1; i++ {
		c, c1 := t[i], t[i+1]
		switch {
		case i == 0 && c == '"':
			b.WriteByte(c)
		case c == '\\' && (c1 == '"' || c1 == '\\'):
			if i != 0 && i != n-2 {
				b.WriteByte(c)
			}
			b.WriteByte(c1)
			i++
		case c == '"':
			b.WriteString(`\"`)
		case c == '\\':
			b.WriteByte(c1)
			i++
		default:
			b.WriteByte(c)
			if i == n-2 && c1 == '"' {
				b.WriteByte(c1)
			}
		}
	}
	return b.String()
}
