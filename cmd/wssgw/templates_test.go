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
