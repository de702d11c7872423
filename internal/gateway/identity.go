package gateway

import (
	"context"
	"net/http"
	"slices"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/wss"
)

// defaultIdentityHeaders are reserved even when no route names them: a
// backend (or a later configuration) may read them, and only wssgw may
// assert who signed.
var defaultIdentityHeaders = []string{"X-WSS-Subject", "X-WSS-Thumbprint", "X-WSS-Username"}

// reservedHeaders are the identity header names of the whole gateway,
// folded (foldHeaderName): the defaults and every identityHeaders name of
// every route. A client's copy of any of them is removed from every
// request on every route, policy none included, because a backend may serve
// several routes and cannot tell which one a request came through.
type reservedHeaders []string

func newReservedHeaders(routes []config.Route) reservedHeaders {
	var rs reservedHeaders
	add := func(name string) {
		if f := foldHeaderName(name); name != "" && !slices.Contains(rs, f) {
			rs = append(rs, f)
		}
	}
	for _, name := range defaultIdentityHeaders {
		add(name)
	}
	for _, r := range routes {
		add(r.IdentityHeaders.Subject)
		add(r.IdentityHeaders.Thumbprint)
		add(r.IdentityHeaders.Username)
	}
	return rs
}

// foldHeaderName is the spelling of a header name that CGI, WSGI, Rack and
// PHP backends see: case-insensitive (RFC 9110 §5.1) and with _ and - the
// same (CGI/1.1, RFC 3875 §4.1.18, maps - to _ in HTTP_* variables, so
// X_WSS_Subject and X-WSS-Subject arrive as one HTTP_X_WSS_SUBJECT).
func foldHeaderName(name string) string {
	b := []byte(name)
	for i, c := range b {
		b[i] = foldByte(c)
	}
	return string(b)
}

func foldByte(c byte) byte {
	switch {
	case 'A' <= c && c <= 'Z':
		return c + 'a' - 'A'
	case c == '_':
		return '-'
	}
	return c
}

// has reports whether name, folded, is reserved. It runs on every header of
// every request, so it compares in place instead of folding a copy.
func (rs reservedHeaders) has(name string) bool {
	for _, r := range rs {
		if len(r) != len(name) {
			continue
		}
		i := 0
		for i < len(name) && foldByte(name[i]) == r[i] {
			i++
		}
		if i == len(name) {
			return true
		}
	}
	return false
}

// strip removes every header whose folded name is reserved.
func (rs reservedHeaders) strip(h http.Header) {
	for name := range h {
		if rs.has(name) {
			delete(h, name)
		}
	}
}

// identity is the verified identity a secured request carries to the
// backend: header name and value pairs.
type identity [][2]string

type identityKey struct{}

// identityOf is the identity a verified message asserts under the route's
// configured header names; nil when the message was forwarded unparsed (res
// nil) or the route names no header.
func identityOf(names config.IdentityHeaders, res *wss.Result) identity {
	if res == nil {
		return nil
	}
	var id identity
	add := func(name, value string) {
		if name != "" && value != "" {
			id = append(id, [2]string{name, value})
		}
	}
	if s := res.Signer(); s != nil {
		add(names.Subject, s.Subject)
		add(names.Thumbprint, s.SHA256)
	}
	if res.Username != nil {
		add(names.Username, res.Username.Username)
	}
	return id
}

// withIdentity hands the verified identity to the proxy's Rewrite, which
// sets it on the outbound request (setIdentity).
func withIdentity(r *http.Request, id identity) *http.Request {
	if len(id) == 0 {
		return r
	}
	return r.WithContext(context.WithValue(r.Context(), identityKey{}, id))
}

// setIdentity makes the outbound request's identity headers exactly the
// gateway's: it runs in Rewrite, after httputil.ReverseProxy removed the
// hop-by-hop headers and those a client's Connection header names (RFC 9110
// §7.6.1), so "Connection: X-WSS-Subject" cannot remove what is set here.
func (rs reservedHeaders) setIdentity(pr *http.Request, out http.Header) {
	rs.strip(out)
	id, _ := pr.Context().Value(identityKey{}).(identity)
	for _, kv := range id {
		out.Set(kv[0], kv[1])
	}
}
