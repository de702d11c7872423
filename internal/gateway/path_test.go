package gateway

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/testpath"
)

func TestCanonicalPath(t *testing.T) {
	tests := map[string]struct {
		raw, want string // want "" = refused
	}{
		"ok/root":              {"/", "/"},
		"ok/plain":             {"/orders", "/orders"},
		"ok/trailing-slash":    {"/orders/", "/orders/"},
		"ok/nested":            {"/orders/wsdl/v2", "/orders/wsdl/v2"},
		"ok/dots-in-name":      {"/orders/a.b/...x/...", "/orders/a.b/...x/..."},
		"ok/sub-delims":        {"/a/!$&'()*+,=:@-._~", "/a/!$&'()*+,=:@-._~"},
		"ok/encoded-space":     {"/my%20service", "/my service"},
		"ok/encoded-letter":    {"/orders/%41", "/orders/A"},
		"ok/encoded-utf8":      {"/caf%C3%A9", "/café"},
		"ok/encoded-utf8-low":  {"/caf%c3%a9", "/café"},
		"ok/encoded-question":  {"/a%3Fb", "/a?b"},
		"ok/encoded-hash":      {"/a%23b", "/a#b"},
		"fail/empty":           {"", ""},
		"fail/relative":        {"orders", ""},
		"fail/asterisk":        {"*", ""},
		"fail/dotdot-end":      {"/orders/wsdl/..", ""},
		"fail/dotdot-slash":    {"/orders/wsdl/../", ""},
		"fail/dotdot-mid":      {"/public/../orders", ""},
		"fail/dot-dotdot":      {"/public/./../orders", ""},
		"fail/dot":             {"/orders/.", ""},
		"fail/dot-mid":         {"/./orders", ""},
		"fail/enc-dotdot":      {"/orders/wsdl/%2e%2e", ""},
		"fail/enc-dotdot-up":   {"/orders/wsdl/%2E%2E", ""},
		"fail/enc-dot-half":    {"/orders/wsdl/.%2e", ""},
		"fail/enc-dot-in-name": {"/orders/a%2eb", ""},
		"fail/enc-slash":       {"/orders/wsdl%2f..", ""},
		"fail/enc-slash-up":    {"/orders/wsdl%2F..", ""},
		"fail/enc-slash-mid":   {"/public/..%2forders", ""},
		"fail/enc-slashes":     {"/public%2f..%2forders", ""},
		"fail/param-dotdot":    {"/orders/wsdl/..;/", ""},
		"fail/jsessionid":      {"/orders;jsessionid=ABC", ""},
		"fail/param-segment":   {"/public;x=1/../orders", ""},
		"fail/enc-semicolon":   {"/orders%3bx", ""},
		"fail/backslash":       {"/public\\..\\orders", ""},
		"fail/enc-backslash":   {"/public%5c..%5corders", ""},
		"fail/enc-backslash-u": {"/public%5C..", ""},
		"fail/double-slash":    {"//orders", ""},
		"fail/double-mid":      {"/public//orders", ""},
		"fail/double-trailing": {"/orders//", ""},
		"fail/enc-nul":         {"/orders%00.wsdl", ""},
		"fail/enc-control":     {"/orders%0a", ""},
		"fail/enc-del":         {"/orders%7F", ""},
		"fail/enc-percent":     {"/orders/%252e%252e", ""},
		"fail/enc-percent-low": {"/orders%25", ""},
		"fail/malformed":       {"/orders%2", ""},
		"fail/malformed-hex":   {"/orders%zz", ""},
		"fail/malformed-iis":   {"/orders/%u002e%u002e", ""},
		"fail/raw-nul":         {"/orders\x00", ""},
		"fail/raw-tab":         {"/orders\t", ""},
		"fail/raw-space":       {"/my service", ""},
		"fail/raw-del":         {"/orders\x7f", ""},
		"fail/raw-utf8":        {"/café", ""},
		"fail/raw-high":        {"/orders\xc0\xae", ""},
		"fail/hash":            {"/orders#/../public", ""},
		"fail/brace":           {"/orders{x}", ""},
		"fail/quote":           {`/orders"`, ""},
		"fail/overlong-dot":    {"/orders/%c0%ae%c0%ae", ""},
		"fail/invalid-utf8":    {"/orders/%ff", ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := canonicalPath(tc.raw)
			if tc.want == "" {
				assert.ErrorIs(t, err, errPath)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestRawPath(t *testing.T) {
	tests := map[string]struct{ target, want string }{
		"ok/origin":         {"/orders/a?x=1", "/orders/a"},
		"ok/origin-encoded": {"/orders/%2e%2e?x", "/orders/%2e%2e"},
		"ok/absolute":       {"http://gw:8080/orders/..?x", "/orders/.."},
		"ok/absolute-root":  {"http://gw", ""},
		"ok/asterisk":       {"*", "*"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.want, rawPath(&http.Request{RequestURI: tc.target}))
		})
	}
}

// newTraversalFront is the setting of issue 13's path attack: a secured
// /orders next to the policy-none routes /orders/wsdl and /public, all on
// one backend that would map a resolved /orders to the secured service.
func newTraversalFront(t *testing.T, backend string) *httptest.Server {
	t.Helper()
	k := newSigningPKI(t)
	cfg := config.Default()
	p := config.DefaultPolicy()
	p.Trust.CAFiles = []string{k.caFile}
	cfg.Policies = map[string]config.Policy{"partner": p}
	cfg.Routes = []config.Route{
		{Name: "orders", Path: "/orders", Backend: backend, Policy: "partner"},
		{Name: "wsdl", Path: "/orders/wsdl", Backend: backend, Policy: config.PolicyNone},
		{Name: "public", Path: "/public", Backend: backend, Policy: config.PolicyNone},
	}
	cfg.ApplyDefaults()
	require.NoError(t, cfg.Validate())
	gw, err := New(&cfg, metrics.New(metrics.BuildInfo{Version: "test"}), slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	t.Cleanup(gw.Close)
	srv := httptest.NewServer(gw)
	t.Cleanup(srv.Close)
	return srv
}

// TestPathTraversalAcrossRoutes sends issue 13's traversals (raw and
// encoded) at the policy-none routes: none may reach the backend, every one
// gets the same 400 fault.
func TestPathTraversalAcrossRoutes(t *testing.T) {
	rec := newRecorder(t)
	gw := newTraversalFront(t, rec.URL)
	for _, target := range []string{
		"/orders/wsdl/..", "/orders/wsdl/../", "/orders/wsdl/%2e%2e", "/orders/wsdl/%2E%2E", "/orders/wsdl/.%2e",
		"/orders/wsdl%2f..", "/orders/wsdl%2F..", "/orders/wsdl/..;/", "/orders/wsdl;/../",
		"/public/../orders", "/public/./../orders", "/public/..%2forders", "/public%2f..%2forders",
		"/public/..%5corders", "/public\\..\\orders", "/public//../orders", "/public/%252e%252e/orders",
		"/public/..%00/orders", "/public;jsessionid=1/../orders", "http://gw/public/../orders",
	} {
		t.Run("fail/"+target, func(t *testing.T) {
			resp, body := rawPost(t, gw.Listener.Addr().String(), target, nil, []byte(testEnvelope))
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
			assert.Contains(t, string(body), "Invalid request path")
			assert.True(t, resp.Close, "the connection is not reused")
		})
	}
	assert.Empty(t, rec.requests(), "a traversal reached the backend")
}

// TestForwardedPathIsRoutedPath: the backend receives the path wssgw routed
// on, canonically encoded, and the query untouched.
func TestForwardedPathIsRoutedPath(t *testing.T) {
	rec := newRecorder(t)
	gw := newTraversalFront(t, rec.URL)
	tests := map[string]struct{ target, want string }{
		"ok/plain":        {"/public/x", "/public/x"},
		"ok/query":        {"/public/x?wsdl&a=%2F..%2F", "/public/x?wsdl&a=%2F..%2F"},
		"ok/query-raw":    {"/public/x?b=2;a=1&c=%zz", "/public/x?b=2;a=1&c=%zz"},
		"ok/encoded":      {"/public/%41%42", "/public/AB"},
		"ok/utf8-lower":   {"/public/caf%c3%a9", "/public/caf%C3%A9"},
		"ok/space":        {"/public/a%20b", "/public/a%20b"},
		"ok/trailing":     {"/orders/wsdl/", "/orders/wsdl/"},
		"ok/enc-question": {"/public/a%3Fb?c", "/public/a%3Fb?c"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			resp, body := rawPost(t, gw.Listener.Addr().String(), tc.target, nil, []byte(testEnvelope))
			require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
			assert.Equal(t, tc.want, rec.last(t).target)
		})
	}
}

// TestPathOverrideHeadersRemoved: headers that make IIS-style backends
// serve another path than the routed one never reach the backend.
func TestPathOverrideHeadersRemoved(t *testing.T) {
	rec := newRecorder(t)
	gw := newTraversalFront(t, rec.URL)
	resp, body := rawPost(t, gw.Listener.Addr().String(), "/public",
		[]string{"X-Original-URL: /orders", "X-Rewrite-URL: /orders", "x_original_url: /orders", "X-Original-Url: /orders"}, []byte(testEnvelope))
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	for name := range rec.last(t).header {
		assert.False(t, pathOverrides.has(name), "%s reached the backend", name)
	}
}

// FuzzCanonicalPath: a path wssgw accepts is one a normalizing backend
// leaves as it is, so routing and backend agree on its segments; and the
// path forwarded (the decoded path re-encoded) is accepted and means the
// same.
func FuzzCanonicalPath(f *testing.F) {
	for _, s := range []string{
		"/", "/orders", "/orders/", "/orders/wsdl/..", "/orders/wsdl/%2e%2e", "/orders/wsdl%2f..", "/orders/wsdl/..;/",
		"/public/..%2forders", "/a/./b", "/a//b", "/a\\b", "/caf%C3%A9", "/a%20b", "/%41", "/a;b=c/d", "/%c0%ae",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		decoded, err := canonicalPath(raw)
		if err != nil {
			return
		}
		if n := testpath.Tomcat(raw); n != decoded {
			t.Fatalf("accepted %q: routed as %q, a normalizing backend sees %q", raw, decoded, n)
		}
		fwd := (&url.URL{Path: decoded}).EscapedPath()
		again, err := canonicalPath(fwd)
		if err != nil || again != decoded {
			t.Fatalf("accepted %q: forwarded as %q, which checks as %q, %v", raw, fwd, again, err)
		}
	})
}
