package testpath

import (
	"net/url"
	"strings"
)

// Tomcat is the path a Tomcat-like servlet container routes a
// request-target to with a lenient connector: the query dropped (and the
// scheme and host of an absolute form), path parameters (";...") removed
// from every segment, then every percent-encoding decoded (%2e, and %2f
// and %5c as ALLOW_ENCODED_SLASH and ALLOW_BACKSLASH would), backslashes
// read as slashes, "//" collapsed and dot segments resolved (RFC 3986
// §5.2.4). Jetty and Spring's firewall-less setups land in the same
// place for the forms of issue 13 item 2.
func Tomcat(target string) string {
	p := target
	if i := strings.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	if u, err := url.Parse(p); err == nil && u.IsAbs() {
		p = u.EscapedPath()
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if j := strings.IndexByte(s, ';'); j >= 0 {
			segs[i] = s[:j]
		}
	}
	p = strings.Join(segs, "/")
	if d, err := url.PathUnescape(p); err == nil {
		p = d
	}
	p = strings.ReplaceAll(p, `\`, "/")
	for strings.Contains(p, "//") {
		p = strings.ReplaceAll(p, "//", "/")
	}
	return removeDotSegments(strings.TrimPrefix(p, "/"))
}

// removeDotSegments is RFC 3986 §5.2.4 on the segments of an absolute
// path, given without its leading slash.
func removeDotSegments(p string) string {
	var out []string
	segs := strings.Split(p, "/")
	for i, s := range segs {
		last := i == len(segs)-1
		switch s {
		case ".":
			if last {
				out = append(out, "")
			}
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, s)
		}
	}
	return "/" + strings.Join(out, "/")
}
