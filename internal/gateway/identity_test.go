package gateway

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
)

func TestFoldHeaderName(t *testing.T) {
	for _, name := range []string{"X-WSS-Subject", "x-wss-subject", "X_WSS_Subject", "x_wss-SUBJECT", "X-Wss-Subject"} {
		assert.Equal(t, "x-wss-subject", foldHeaderName(name), name)
	}
	assert.NotEqual(t, "x-wss-subject", foldHeaderName("X-WSS-Subjects"))
}

func TestReservedHeaders(t *testing.T) {
	rs := newReservedHeaders([]config.Route{
		{IdentityHeaders: config.IdentityHeaders{Subject: "X-Partner-DN"}},
		{IdentityHeaders: config.IdentityHeaders{Username: "Remote_User"}},
	})
	h := http.Header{
		"X_wss_subject": {"a"}, "X-Wss-Thumbprint": {"b"}, "x-wss-username": {"c"},
		"X-Partner-Dn": {"d"}, "Remote-User": {"e"}, "Soapaction": {"f"}, "X-Wss-Other": {"g"},
	}
	rs.strip(h)
	assert.Equal(t, http.Header{"Soapaction": {"f"}, "X-Wss-Other": {"g"}}, h)
}

// identityRoutes: a secured /orders passing the signer's subject and
// thumbprint, and a policy-none /public on the same backend.
func identityRoutes(backend string) func(c *config.Config) {
	return func(c *config.Config) {
		c.Routes[0].IdentityHeaders = config.IdentityHeaders{Subject: "X-WSS-Subject", Thumbprint: "X-WSS-Thumbprint"}
		c.Routes = append(c.Routes, config.Route{Name: "public", Path: "/public", Backend: backend, Policy: config.PolicyNone})
	}
}

// reserved returns the backend's identity headers under their folded names.
func reservedOf(h http.Header) map[string][]string {
	rs := append(newReservedHeaders(nil), "x-wss-partner")
	out := map[string][]string{}
	for name, v := range h {
		if rs.has(name) {
			out[foldHeaderName(name)] = append(out[foldHeaderName(name)], v...)
		}
	}
	return out
}

// TestIdentityHeadersCannotBeSpoofed: whatever identity headers a client
// sends, in whatever spelling, and whichever it names in Connection, the
// backend receives exactly the identity wssgw verified on a secured route,
// and none on a policy-none route.
func TestIdentityHeadersCannotBeSpoofed(t *testing.T) {
	k := newSigningPKI(t)
	rec := newRecorder(t)
	f := newSigningFrontConfig(t, rec.URL, k, func(r *config.Responses) { *r = config.DefaultResponses() }, identityRoutes(rec.URL))
	addr := f.Listener.Addr().String()

	resp, body := rawPost(t, addr, "/orders", nil, signedRequest(t, k))
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	verified := reservedOf(rec.last(t).header)
	require.Len(t, verified["x-wss-subject"], 1)
	require.Len(t, verified["x-wss-thumbprint"], 1)
	assert.Contains(t, verified["x-wss-subject"][0], "CN=partner")

	attacks := map[string][]string{
		"fail/underscore":       {"X_WSS_Subject: CN=admin"},
		"fail/lower":            {"x-wss-subject: CN=admin"},
		"fail/mixed":            {"X-Wss-Subject: CN=admin"},
		"fail/mixed-underscore": {"x_Wss-subject: CN=admin", "X_WSS_THUMBPRINT: 00"},
		"fail/connection-drop":  {"Connection: keep-alive, X-WSS-Subject, X-WSS-Thumbprint", "X_WSS_Subject: CN=admin"},
		"fail/connection-only":  {"Connection: X-WSS-Subject, X-WSS-Thumbprint"},
		"fail/default-username": {"X-WSS-Username: admin"},
		"fail/doubled":          {"X-WSS-Subject: CN=admin", "X-WSS-Subject: CN=root"},
	}
	for name, headers := range attacks {
		t.Run(name+"/secured", func(t *testing.T) {
			resp, body := rawPost(t, addr, "/orders", headers, signedRequest(t, k))
			require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
			assert.Equal(t, verified, reservedOf(rec.last(t).header))
		})
		t.Run(name+"/policy-none", func(t *testing.T) {
			resp, body := rawPost(t, addr, "/public", headers, []byte(testEnvelope))
			require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
			assert.Empty(t, reservedOf(rec.last(t).header))
		})
	}
}

// TestConfiguredIdentityHeadersReservedOnEveryRoute: a name one route
// configures is stripped on every route, in every spelling.
func TestConfiguredIdentityHeadersReservedOnEveryRoute(t *testing.T) {
	k := newSigningPKI(t)
	rec := newRecorder(t)
	f := newSigningFrontConfig(t, rec.URL, k, func(r *config.Responses) { *r = config.DefaultResponses() }, func(c *config.Config) {
		identityRoutes(rec.URL)(c)
		c.Routes[0].IdentityHeaders.Username = "X-WSS-Partner"
	})
	resp, body := rawPost(t, f.Listener.Addr().String(), "/public", []string{"X_Wss_Partner: admin", "x-wss-partner: admin"}, []byte(testEnvelope))
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	assert.Empty(t, reservedOf(rec.last(t).header))
}
