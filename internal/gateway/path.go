package gateway

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"
)

// errPath is a request path that is not in canonical form (classify: 400).
var errPath = errors.New("gateway: invalid request path")

// checkPath refuses a request whose path a backend could resolve to other
// segments than the ones wssgw routes on. Routing is by prefix on the
// decoded path; a backend (Tomcat, Jetty, Spring, IIS) first strips ;
// parameters, decodes %2e and, leniently, %2f or %5c, folds \ into /,
// collapses // and removes dot segments (RFC 3986 §5.2.4), so
// /public/..%2forders would pass as the route /public and reach /orders
// unverified. Rather than guess each backend's normalization, wssgw accepts
// only paths that every such normalization leaves unchanged, and the path it
// forwards is the one it routed on (newProxy). It returns nil when the
// path is canonical and r.URL.Path is its decoding.
func checkPath(r *http.Request) error {
	decoded, err := canonicalPath(rawPath(r))
	if err != nil {
		return err
	}
	if decoded != r.URL.Path {
		// Cannot happen with net/http's parser; refuse rather than route
		// on one reading and forward another.
		return fmt.Errorf("%w: decodes differently from the parsed URL", errPath)
	}
	return nil
}

// pathOverrides are request headers some backends take for the request
// path instead of the request-target: IIS URL Rewrite and frameworks
// behind it (Symfony before CVE-2018-14773, Zend, Laminas) read
// X-Original-URL and X-Rewrite-URL. A client's copy would let a request
// routed to a policy-none route be served as a secured one, so Rewrite
// removes them (folded, as identity headers) from every request.
var pathOverrides = reservedHeaders{"x-original-url", "x-rewrite-url"}

// rawPath is the path of the request-target as the client sent it, before
// any decoding (RFC 9112 §3.2): r.URL.EscapedPath may re-encode it and hide
// raw bytes. The absolute-form (RFC 9112 §3.2.2) contributes the path after
// its authority.
func rawPath(r *http.Request) string {
	t := r.RequestURI
	if t == "" { // a request built in-process, not read by a server
		t = r.URL.EscapedPath()
	}
	if i := strings.IndexByte(t, '?'); i >= 0 {
		t = t[:i]
	}
	if !strings.HasPrefix(t, "/") {
		if i := strings.Index(t, "://"); i > 0 {
			rest := t[i+len("://"):]
			if j := strings.IndexByte(rest, '/'); j >= 0 {
				return rest[j:]
			}
			return ""
		}
	}
	return t
}

// canonicalPath checks a raw path and returns its decoding. A canonical path
//   - starts with /;
//   - has no . or .. segment and no empty segment (//) except a single
//     trailing /;
//   - has raw only RFC 3986 pchar characters (unreserved, sub-delims, : and
//     @) other than ;: so no \, no ; path parameters, no control characters,
//     space, non-ASCII bytes, #, or other characters RFC 3986 §3.3 excludes;
//   - uses percent-encoding only in well-formed %XX triplets that decode to
//     none of . / \ ; % and no control character (00–1F, 7F): a backend that
//     decodes those (once or twice) sees other segments;
//   - decodes to valid UTF-8, so overlong forms such as %C0%AE (a . to some
//     decoders) are refused.
//
// Other percent-encodings (%20, %C3%A9, %41 ...) pass.
func canonicalPath(raw string) (string, error) {
	if !strings.HasPrefix(raw, "/") {
		return "", fmt.Errorf("%w: does not start with /", errPath)
	}
	if err := checkSegments(raw); err != nil {
		return "", err
	}
	escapes := 0
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '%' {
			if !pathChar(c) {
				return "", fmt.Errorf("%w: byte 0x%02x at %d", errPath, c, i)
			}
			continue
		}
		if i+2 >= len(raw) || !isHex(raw[i+1]) || !isHex(raw[i+2]) {
			return "", fmt.Errorf("%w: malformed percent-encoding at %d", errPath, i)
		}
		if d := unhex(raw[i+1])<<4 | unhex(raw[i+2]); reservedEncoding(d) {
			return "", fmt.Errorf("%w: %s encodes 0x%02x", errPath, raw[i:i+3], d)
		}
		escapes++
		i += 2
	}
	if escapes == 0 {
		return raw, nil
	}
	b := make([]byte, 0, len(raw)-2*escapes)
	for i := 0; i < len(raw); i++ {
		if raw[i] == '%' {
			b = append(b, unhex(raw[i+1])<<4|unhex(raw[i+2]))
			i += 2
			continue
		}
		b = append(b, raw[i])
	}
	if !utf8.Valid(b) {
		return "", fmt.Errorf("%w: decodes to invalid UTF-8", errPath)
	}
	return string(b), nil
}

// checkSegments refuses dot segments and empty segments (RFC 3986 §3.3).
// Since neither / nor . may be percent-encoded, the raw segments are the
// decoded ones.
func checkSegments(raw string) error {
	rest := raw[1:]
	for {
		seg, tail, more := strings.Cut(rest, "/")
		switch {
		case seg == "." || seg == "..":
			return fmt.Errorf("%w: dot segment", errPath)
		case seg == "" && more:
			return fmt.Errorf("%w: empty segment", errPath)
		}
		if !more {
			return nil // a last empty segment is the single trailing /
		}
		rest = tail
	}
}

// pathChar reports the bytes a canonical path carries unencoded: RFC 3986
// pchar (unreserved / sub-delims / ":" / "@") and "/", without ";" (path
// parameters: Tomcat and Jetty drop them before mapping, wssgw would route
// on them).
func pathChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("-._~!$&'()*+,=:@/", c) >= 0
}

// reservedEncoding reports the decoded bytes a canonical path never
// percent-encodes: they change segments once decoded (. / \ ;), stack
// encodings for a second decode (%), or are control characters.
func reservedEncoding(d byte) bool {
	return d < 0x20 || d == 0x7f || d == '.' || d == '/' || d == '\\' || d == ';' || d == '%'
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
