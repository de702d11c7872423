package soap

import (
	"errors"
	"fmt"
	"mime"
	"strings"
)

// ErrCharset is a Content-Type whose charset is not UTF-8, or whose
// parameters do not parse.
var ErrCharset = errors.New("soap: charset other than UTF-8")

// CheckCharset applies wssgw's one-charset rule to the Content-Type of a
// SOAP envelope (a plain request or the root part of a package): the gate
// reads UTF-8 only (an XML declaration naming another encoding is
// refused), so the label may only say utf-8, or nothing (UTF-8 is what
// wssgw forwards and SOAP 1.2 Part 2 §7.1.4 defaults to). Charset names are
// case-insensitive (RFC 2046 §4.1.2); the value may be quoted (RFC 2045
// §5.1). A parameter list that does not parse (a duplicate, a bare
// parameter) is refused too: a backend might find a charset in it that
// this parser did not, and read other characters than were verified
// (UTF-7's "+ADw-" is "<").
func CheckCharset(contentType string) error {
	if canonicalAction(contentType) {
		return nil
	}
	_, err := envelopeParams(contentType)
	return err
}

// ForwardContentType is the Content-Type a plain envelope of version v is
// forwarded with once CheckCharset accepted contentType: the media type of
// v with charset=utf-8, the charset of the bytes that were gated, and for
// SOAP 1.2 the action parameter (RFC 3902 §6) if the request had one.
// Other parameters are dropped: none is defined for these media types.
func ForwardContentType(contentType string, v Version) string {
	if v != V12 {
		return v.ContentType()
	}
	if canonicalAction(contentType) {
		return contentType // already what forwardParsed would write
	}
	return forwardParsed(contentType, v)
}

// forwardParsed is ForwardContentType for SOAP 1.2 by the general parser.
func forwardParsed(contentType string, v Version) string {
	params, err := envelopeParams(contentType)
	action, ok := params["action"]
	if err != nil || !ok {
		return v.ContentType()
	}
	const media = "application/soap+xml"
	ct := mime.FormatMediaType(media, map[string]string{"action": action})
	if ct == "" {
		return v.ContentType() // an action no quoted-string can carry
	}
	// charset first, as SOAP stacks write it.
	return v.ContentType() + ct[len(media):]
}

// envelopeParams checks the charset of contentType and returns its
// parameters (nil when it has none or only the charset). The common labels
// are checked without allocating.
func envelopeParams(contentType string) (map[string]string, error) {
	i := strings.IndexByte(contentType, ';')
	if i < 0 {
		return nil, nil
	}
	switch rest := strings.TrimSpace(contentType[i+1:]); {
	case strings.EqualFold(rest, "charset=utf-8"), strings.EqualFold(rest, `charset="utf-8"`):
		return nil, nil
	}
	_, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return nil, fmt.Errorf("%w: Content-Type %q: %w", ErrCharset, contentType, err)
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return nil, fmt.Errorf("%w: charset %q", ErrCharset, cs)
	}
	return params, nil
}

// canonicalActionPrefix is the Content-Type of a SOAP 1.2 request as
// ForwardContentType writes it, up to the action's quoted value.
const canonicalActionPrefix = `application/soap+xml; charset=utf-8; action="`

// canonicalAction recognizes, without allocating, the Content-Type most
// SOAP 1.2 stacks send and ForwardContentType forwards unchanged:
// canonicalActionPrefix, an action of printable ASCII that needs quoting
// (a URI: it has a ':' or '/'), no '"' or '\\' in it, and the closing
// quote. Any other spelling takes the general
// parser (mime.ParseMediaType), which gives the same verdict and the same
// forwarded value for this one (TestCanonicalAction, FuzzCanonicalAction):
// two parses and a format per SOAP 1.2 request were most of what the
// gateway's header checks allocated (issue 14).
func canonicalAction(contentType string) bool {
	rest, ok := strings.CutPrefix(contentType, canonicalActionPrefix)
	if !ok || len(rest) < 2 || rest[len(rest)-1] != '"' {
		return false
	}
	action := rest[:len(rest)-1]
	special := false
	for i := 0; i < len(action); i++ {
		c := action[i]
		switch {
		case c <= ' ' || c >= 0x7f || c == '"' || c == '\\':
			return false
		case strings.IndexByte(`()<>@,;:/[]?=`, c) >= 0:
			special = true // mime.FormatMediaType quotes it
		}
	}
	return special
}
