package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func runCLI(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), errb.String(), ee.ExitCode()
	}
	require.NoError(t, err)
	return out.String(), errb.String(), 0
}

func TestValidateExample(t *testing.T) {
	out, _, code := runCLI(t, nil, "validate", "--config", "../../config.example.yaml")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "ok")
}

// TestValidateNamesEveryBadKey: one run lists every problem by key path.
func TestValidateNamesEveryBadKey(t *testing.T) {
	file := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(file, []byte(`
listen: 127.0.0.1
admin:
  listen: 127.0.0.1:9090
  colour: blue
log: {level: loud, format: xml}
shutdown: {drainTimeout: soon}
server: {maxHeaderBytes: 12}
tls: {certFile: /missing/cert.pem}
routes:
  - name: Bad Name
    path: orders/
    backend: ftp://example
    policy: partner-x
    maxBodyBytes: lots
    timeouts: {read: 0s, backend: -5s}
    typo: 1
  - name: ok
    path: /ok
    backend: http://127.0.0.1:1
  - name: ok
    path: /ok
    backend: http://127.0.0.1:1
`), 0o600))
	out, errOut, code := runCLI(t, []string{"WSSGW_ADMIN_PPROF=notabool"}, "validate", "--config", file)
	assert.Equal(t, 1, code)
	for _, key := range []string{
		"listen:", "admin.colour: unknown key", "log.level:", "log.format:", "shutdown.drainTimeout:",
		"server.maxHeaderBytes:", "tls.keyFile:", "routes[0].name:", "routes[0].path:", "routes[0].backend:",
		"routes[0].policy:", "routes[0].maxBodyBytes:", "routes[0].timeouts.read:", "routes[0].timeouts.backend:",
		"routes[0].typo: unknown key", "routes[2].name:", "routes[2].path:", "admin.pprof:",
	} {
		assert.Contains(t, "\n"+out, "\n"+key, "validate did not name %s", key)
	}
	assert.Contains(t, errOut, "problem(s)")
}

func TestEnvironmentAndFlagOverrides(t *testing.T) {
	// The environment overrides the file, and a flag overrides both.
	out, _, code := runCLI(t, []string{"WSSGW_LOG_LEVEL=chatty"}, "validate", "--config", "../../config.example.yaml")
	assert.Equal(t, 1, code)
	assert.Contains(t, out, `log.level: must be one of debug, info, warn, error, got "chatty"`)
	_, _, code = runCLI(t, []string{"WSSGW_LOG_LEVEL=chatty"}, "validate", "--config", "../../config.example.yaml", "--log-level", "debug")
	assert.Equal(t, 0, code)
}

func TestEnvironmentTypoAndUnitlessDuration(t *testing.T) {
	// A misspelt variable and a duration without a unit stop the gateway
	// instead of being ignored or read as nanoseconds: one line each.
	out, _, code := runCLI(t, []string{"WSSGW_LOGG_LEVEL=debug", "WSSGW_SHUTDOWN_DRAINTIMEOUT=10"}, "validate", "--config", "../../config.example.yaml")
	assert.Equal(t, 1, code)
	assert.Equal(t, "shutdown.drainTimeout: duration 10 needs a unit such as 5s (500ms, 30s, 2m; a bare number would be nanoseconds)\n"+
		"WSSGW_LOGG_LEVEL: unknown environment variable (value \"debug\"); did you mean WSSGW_LOG_LEVEL?\n", out)
}

func TestVersionFromBuild(t *testing.T) {
	out, _, code := runCLI(t, nil, "version")
	require.Equal(t, 0, code)
	assert.Contains(t, out, buildVersion)
	assert.Contains(t, out, "e2ecommit")
	assert.Contains(t, out, runtime.Version())
}
