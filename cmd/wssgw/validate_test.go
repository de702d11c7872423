package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// renderedManifest is what `helm template` prints for the chart: other
// documents around a ConfigMap whose config.yaml names files under the
// pod's /etc/wssgw/keys.
const renderedManifest = `---
apiVersion: v1
kind: Secret
metadata: {name: demo-keys}
stringData: {ca.crt: "..."}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: demo-dashboards}
data: {wssgw-overview.json: "{}"}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: demo-wssgw
data:
  config.yaml: |
    listen: 0.0.0.0:8080
    admin: {listen: 0.0.0.0:9090}
    routes:
      - {name: orders, path: /orders, backend: "http://127.0.0.1:9000", policy: partner-a}
    policies:
      partner-a:
        trust: {caFiles: [/etc/wssgw/keys/demo/ca.crt]}
`

// TestValidateConfigMap: validate --configmap checks the chart's rendered
// configuration, not the manifest around it, and --mount points the pod's
// paths at local copies.
func TestValidateConfigMap(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys")
	require.NoError(t, os.MkdirAll(keys, 0o700))
	ca, err := os.ReadFile(filepath.Join("..", "..", "examples", "keys", "ca.crt"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(keys, "ca.crt"), ca, 0o600))
	manifest := filepath.Join(dir, "rendered.yaml")
	require.NoError(t, os.WriteFile(manifest, []byte(renderedManifest), 0o600))
	typo := filepath.Join(dir, "typo.yaml")
	require.NoError(t, os.WriteFile(typo, []byte(strings.Replace(renderedManifest, "caFiles", "caFile", 1)), 0o600))
	mount := "/etc/wssgw/keys/demo=" + keys
	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
		out   string // in stdout, or in the error when it is not an exitError
	}{
		{"ok/file", "", []string{"--configmap", manifest, "--mount", mount}, "ConfigMap demo-wssgw config.yaml: ok"},
		{"ok/stdin", renderedManifest, []string{"--configmap", "-", "--mount", mount}, "ConfigMap demo-wssgw config.yaml: ok"},
		{"fail/files-not-mounted", "", []string{"--configmap", manifest}, "/etc/wssgw/keys/demo/ca.crt"},
		{"fail/unknown-key", "", []string{"--configmap", typo, "--mount", mount}, "policies.partner-a.trust.caFile"},
		{"fail/no-configmap", "kind: Secret\n", []string{"--configmap", "-"}, `no ConfigMap with data key "config.yaml"`},
		{"fail/not-yaml", "{", []string{"--configmap", "-"}, "reading the manifest"},
		{"fail/both", "", []string{"--configmap", manifest, "--config", manifest}, "exclude each other"},
		{"fail/mount-alone", "", []string{"--config", manifest, "--mount", mount}, "--mount needs --configmap"},
		{"fail/mount-relative", "", []string{"--configmap", manifest, "--mount", "etc=" + keys}, "want /pod/dir=local/dir"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := runCLI(t, []byte(tc.stdin), append([]string{"validate"}, tc.args...)...)
			if strings.HasPrefix(tc.name, "ok/") {
				require.NoError(t, err)
				assert.Contains(t, out, tc.out)
				return
			}
			require.Error(t, err)
			if _, ok := err.(exitError); ok {
				assert.Contains(t, out, tc.out)
			} else {
				assert.Contains(t, err.Error(), tc.out)
			}
		})
	}
}

// TestValidateOutput: `wssgw validate` prints one line per mistake, naming
// the exact key path as the file spells it and echoing the value.
func TestValidateOutput(t *testing.T) {
	const route = "routes:\n  - {name: a, path: /a, backend: \"http://127.0.0.1:1\"}\n"
	for _, tc := range []struct {
		name string
		file string
		env  map[string]string
		out  string // the whole of stdout
	}{
		{"ok/units", "shutdown: {delay: 0, drainTimeout: 30s}\n" + route, nil, "c.yaml: ok\n"},
		{"ok/env-with-unit", route, map[string]string{"WSSGW_SHUTDOWN_DRAINTIMEOUT": "10s"}, "c.yaml: ok\n"},
		{"fail/bare-number", "routes:\n  - {name: a, path: /a, backend: \"http://h\", timeouts: {backend: 5}}\n", nil,
			"routes[0].timeouts.backend: duration 5 needs a unit such as 5s (500ms, 30s, 2m; a bare number would be nanoseconds)\n"},
		{"fail/env-bare-number", route, map[string]string{"WSSGW_SHUTDOWN_DRAINTIMEOUT": "10"},
			"shutdown.drainTimeout: duration 10 needs a unit such as 5s (500ms, 30s, 2m; a bare number would be nanoseconds)\n"},
		{"fail/env-typo", route, map[string]string{"WSSGW_LOGG_LEVEL": "debug"},
			"WSSGW_LOGG_LEVEL: unknown environment variable (value \"debug\"); did you mean WSSGW_LOG_LEVEL?\n"},
		{"fail/unknown-key-case", "Shutdown: {drainTimeot: 5s}\n" + route, nil, "Shutdown.drainTimeot: unknown key; did you mean shutdown.drainTimeout?\n"},
		{"fail/policy-path", "routes:\n  - {name: a, path: /a, backend: \"http://h\", policy: pv}\npolicies:\n  pv:\n    timestamp: {futureSkew: 60}\n", nil,
			"policies.pv.timestamp.futureSkew: duration 60 needs a unit such as 5s (500ms, 30s, 2m; a bare number would be nanoseconds)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			out, _, err := runCLI(t, nil, "validate", "--config", writeConfig(t, tc.file))
			if strings.HasPrefix(tc.name, "ok/") {
				require.NoError(t, err)
				assert.True(t, strings.HasSuffix(out, tc.out), "got %q", out)
				return
			}
			require.Error(t, err)
			assert.Equal(t, tc.out, out)
		})
	}
}
