package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTemplatesCLIWhenAPIOff: against an admin listener without the
// templates API (admin.templates off, the default) every subcommand says
// how to enable it; an unknown template id on an enabled API stays "no
// template".
func TestTemplatesCLIWhenAPIOff(t *testing.T) {
	off := httptest.NewServer(http.NewServeMux()) // nothing mounted: 404
	t.Cleanup(off.Close)
	file := filepath.Join(t.TempDir(), "export.json")
	require.NoError(t, os.WriteFile(file, []byte("[]"), 0o600))
	for name, args := range map[string][]string{
		"fail/list":   {"list"},
		"fail/show":   {"show", "abc"},
		"fail/export": {"export"},
		"fail/import": {"import", file},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := runCLI(t, nil, append([]string{"templates", "--admin", off.URL}, args...)...)
			require.ErrorIs(t, err, errTemplatesOff)
			assert.Contains(t, err.Error(), "admin.templates: true")
		})
	}
	on := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no template abc", http.StatusNotFound)
	}))
	t.Cleanup(on.Close)
	_, _, err := runCLI(t, nil, "templates", "--admin", on.URL, "show", "abc")
	require.Error(t, err)
	assert.NotErrorIs(t, err, errTemplatesOff)
	assert.Contains(t, err.Error(), "no template abc")
}

// TestAdminBaseURL: --admin takes admin.listen's host:port as well as a URL.
func TestAdminBaseURL(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"ok/default", "127.0.0.1:9090", "http://127.0.0.1:9090"},
		{"ok/host-port", "10.0.0.7:9090", "http://10.0.0.7:9090"},
		{"ok/name-port", "localhost:9090", "http://localhost:9090"},
		{"ok/http-url", "http://127.0.0.1:9090", "http://127.0.0.1:9090"},
		{"ok/https-slash", "https://gw.example:9443/admin/", "https://gw.example:9443/admin"},
		{"fail/ftp", "ftp://127.0.0.1:9090", ""},
		{"fail/no-host", "http://", ""},
		{"fail/bad-escape", "127.0.0.1:9090/%zz", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := adminBaseURL(tc.in)
			if tc.want == "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "host:port")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestTemplatesDefaultAdmin: without --admin the CLI asks admin.listen's
// default, and a host:port reaches the server like a URL does.
func TestTemplatesDefaultAdmin(t *testing.T) {
	cmd := newTemplatesCmd()
	assert.Equal(t, "127.0.0.1:9090", cmd.PersistentFlags().Lookup("admin").DefValue)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("[]"))
	}))
	t.Cleanup(srv.Close)
	out, _, err := runCLI(t, nil, "templates", "--admin", srv.Listener.Addr().String(), "list")
	require.NoError(t, err)
	assert.Contains(t, out, "POLICY")
}
