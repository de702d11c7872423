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
