package gateway

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/metrics"
)

// TestAdminTemplatesOffByDefault: the templates API (an export holds real
// partner messages) answers only when admin.templates enables it.
func TestAdminTemplatesOffByDefault(t *testing.T) {
	for name, enabled := range map[string]bool{"fail/default-off": false, "ok/enabled": true} {
		t.Run(name, func(t *testing.T) {
			cfg := config.Default()
			cfg.Routes = []config.Route{{Name: "orders", Path: "/orders", Backend: "http://127.0.0.1:1"}}
			cfg.Admin.Templates = enabled
			cfg.ApplyDefaults()
			require.NoError(t, cfg.Validate())
			s, err := NewServer(&cfg, metrics.New(metrics.BuildInfo{Version: "test"}), slog.New(slog.NewTextHandler(io.Discard, nil)))
			require.NoError(t, err)
			t.Cleanup(s.current().Close)
			admin := httptest.NewServer(s.adminHandler(cfg.Admin))
			t.Cleanup(admin.Close)

			want := http.StatusNotFound
			if enabled {
				want = http.StatusOK
			}
			for _, req := range []struct{ method, path string }{
				{http.MethodGet, "/templates"}, {http.MethodGet, "/templates/export"}, {http.MethodPost, "/templates/import"},
			} {
				resp, err := http.DefaultClient.Do(mustRequest(t, req.method, admin.URL+req.path, "[]"))
				require.NoError(t, err)
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				assert.Equal(t, want, resp.StatusCode, "%s %s: %s", req.method, req.path, body)
			}
			resp, err := http.Get(admin.URL + "/templates/abc")
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, http.StatusNotFound, resp.StatusCode, "no such template, or no API")
			resp, err = http.Get(admin.URL + "/metrics")
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, http.StatusOK, resp.StatusCode)
		})
	}
}

func mustRequest(t *testing.T, method, url, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	return req
}
