package mime

import (
	"fmt"
	stdmime "mime"
	"strings"
)

// Media types of the root part (SOAP 1.1 and 1.2) and of XOP.
const (
	TypeXOP    = "application/xop+xml"
	TypeSOAP11 = "text/xml"
	TypeSOAP12 = "application/soap+xml"
)

// maxBoundary is RFC 2046 §5.1.1's limit on the boundary length.
const maxBoundary = 70

// packageParams parses a package Content-Type: multipart/related with a
// valid boundary and a root type this gateway handles (RFC 2387 §3.1:
// type is required). The returned map has lower-case keys.
func packageParams(contentType string) (map[string]string, error) {
	media, params, err := stdmime.ParseMediaType(contentType)
	if err != nil {
		return nil, fmt.Errorf("%w: Content-Type %q: %w", ErrMalformed, contentType, err)
	}
	if media != "multipart/related" {
		return nil, fmt.Errorf("%w: Content-Type %q is not multipart/related", ErrMalformed, media)
	}
	b, ok := params["boundary"]
	if !ok {
		return nil, fmt.Errorf("%w: Content-Type has no boundary parameter", ErrMalformed)
	}
	if err := checkBoundary(b); err != nil {
		return nil, err
	}
	switch t := strings.ToLower(params["type"]); t {
	case TypeXOP:
		if si, ok := params["start-info"]; ok && !isSOAPType(si) {
			return nil, fmt.Errorf("%w: start-info %q is not a SOAP media type", ErrMalformed, si)
		}
	case TypeSOAP11, TypeSOAP12:
	case "":
		return nil, fmt.Errorf("%w: Content-Type has no type parameter (RFC 2387 §3.1)", ErrMalformed)
	default:
		return nil, fmt.Errorf("%w: root type %q is neither XOP nor SOAP", ErrMalformed, t)
	}
	if s, ok := params["start"]; ok {
		id, err := parseMsgID(s, false)
		if err != nil {
			return nil, fmt.Errorf("%w: start parameter: %w", ErrMalformed, err)
		}
		params["start"] = id
	}
	return params, nil
}

// checkBoundary applies RFC 2046 §5.1.1: 1 to 70 bchars, not ending in a
// space.
func checkBoundary(b string) error {
	if b == "" || len(b) > maxBoundary || b[len(b)-1] == ' ' {
		return fmt.Errorf("%w: boundary %q must be 1 to %d characters not ending in a space", ErrMalformed, b, maxBoundary)
	}
	for i := 0; i < len(b); i++ {
		if !isBChar(b[i]) {
			return fmt.Errorf("%w: boundary %q has the character %q", ErrMalformed, b, b[i])
		}
	}
	return nil
}

func isBChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("'()+_,-./:=? ", c) >= 0
}

// isSOAPType reports whether v's media type (parameters ignored) is SOAP
// 1.1's or 1.2's.
func isSOAPType(v string) bool {
	m := mediaOf(v)
	return m == TypeSOAP11 || m == TypeSOAP12
}

// mediaOf returns the lower-case media type of a Content-Type value, or ""
// if it does not parse.
func mediaOf(v string) string {
	m, _, err := stdmime.ParseMediaType(v)
	if err != nil {
		return ""
	}
	return m
}

// checkRoot checks the root part's Content-Type against the package's type
// and start-info parameters: XOP 1.0 §4.1 and SOAP MTOM §3.2 (root is
// application/xop+xml whose type parameter is the SOAP media type, equal
// to start-info when given); for SwA the root is the SOAP envelope itself.
func checkRoot(params map[string]string, rootType string) error {
	media, rp, err := stdmime.ParseMediaType(rootType)
	if err != nil {
		return fmt.Errorf("%w: root part Content-Type %q: %w", ErrMalformed, rootType, err)
	}
	want := strings.ToLower(params["type"])
	if media != want {
		return fmt.Errorf("%w: root part is %q, the package type says %q", ErrMalformed, media, want)
	}
	if want != TypeXOP {
		return nil
	}
	inner := mediaOf(rp["type"])
	if inner != TypeSOAP11 && inner != TypeSOAP12 {
		return fmt.Errorf("%w: XOP root part type parameter %q is not a SOAP media type", ErrMalformed, rp["type"])
	}
	if si, ok := params["start-info"]; ok && mediaOf(si) != inner {
		return fmt.Errorf("%w: start-info %q disagrees with the root part's type %q", ErrMalformed, si, inner)
	}
	return nil
}

// parseMsgID parses a Content-ID or start value (RFC 2045 §7, RFC 2387
// §3.2): "<id>" with id made of visible ASCII other than '<' and '>'. The
// brackets are required when brackets is true.
func parseMsgID(v string, brackets bool) (string, error) {
	v = strings.Trim(v, " \t")
	if len(v) >= 2 && v[0] == '<' && v[len(v)-1] == '>' {
		v = v[1 : len(v)-1]
	} else if brackets {
		return "", fmt.Errorf("%q is not enclosed in angle brackets", v)
	}
	if v == "" {
		return "", fmt.Errorf("empty id")
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c <= ' ' || c >= 0x7f || c == '<' || c == '>' {
			return "", fmt.Errorf("id %q has the character %q", v, c)
		}
	}
	return v, nil
}
