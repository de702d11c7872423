package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/wssgw/wssgw/internal/config"
)

const example = "../../config.example.yaml"

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "c.yaml")
	require.NoError(t, os.WriteFile(f, []byte(body), 0o600))
	return f
}

func problems(t *testing.T, err error) map[string]string {
	t.Helper()
	var ps config.Problems
	require.True(t, errors.As(err, &ps), "want config.Problems, got %v", err)
	out := map[string]string{}
	for _, p := range ps {
		out[p.Key] = p.Msg
	}
	return out
}

func TestExampleConfigLoads(t *testing.T) {
	cfg, err := loadConfig(example, nil)
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:8080", cfg.Listen)
	assert.Equal(t, "127.0.0.1:9090", cfg.Admin.Listen)
	require.Len(t, cfg.Routes, 2)
	// The egress example (issue 15): its files resolve like any.
	eg := cfg.Routes[1]
	assert.True(t, eg.IsEgress())
	assert.Equal(t, "partner-b", eg.Egress.Response.Policy)
	assert.FileExists(t, eg.Egress.Sign.CertFile)
	assert.FileExists(t, eg.Egress.Encrypt.PartnerCertFile)
	r := cfg.Routes[0]
	assert.Equal(t, "orders", r.Name)
	assert.Equal(t, "/orders", r.Path)
	assert.Equal(t, "partner-a", r.Policy)
	// The example states the defaults: loading it must give the same values
	// as leaving the keys out.
	d := config.DefaultRoute()
	d.Name, d.Path, d.Backend, d.Policy, d.IdentityHeaders = r.Name, r.Path, r.Backend, r.Policy, r.IdentityHeaders
	assert.Equal(t, d, r)
	def := config.Default()
	def.Routes, def.Policies = cfg.Routes, cfg.Policies
	assert.Equal(t, def, *cfg)
	p, ok := cfg.Policies["partner-a"]
	require.True(t, ok)
	dp := config.DefaultPolicy()
	assert.Equal(t, dp.Require, p.Require)
	assert.Equal(t, dp.Timestamp, p.Timestamp)
	assert.Equal(t, dp.UsernameToken, p.UsernameToken)
	assert.Equal(t, dp.Replay, p.Replay)
	// Relative file names resolve against the config file's directory.
	require.Len(t, p.Trust.CAFiles, 1)
	assert.FileExists(t, p.Trust.CAFiles[0])
	assert.Equal(t, filepath.Join("..", "..", "examples", "keys", "ca.crt"), p.Trust.CAFiles[0])
}

// TestExampleDocumentsEveryKey: every key of the config structs appears in
// config.example.yaml with a comment on its line or just above it.
func TestExampleDocumentsEveryKey(t *testing.T) {
	raw, err := os.ReadFile(example)
	require.NoError(t, err)
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal(raw, &doc))
	lines := strings.Split(string(raw), "\n")
	found := map[string]int{}
	collectKeys(doc.Content[0], "", found)
	for _, key := range structKeys(reflect.TypeOf(config.Config{}), "") {
		line, ok := found[key]
		if !assert.True(t, ok, "config.example.yaml lacks %s", key) {
			continue
		}
		commented := strings.Contains(lines[line-1], "#") || (line >= 2 && strings.HasPrefix(strings.TrimSpace(lines[line-2]), "#"))
		assert.True(t, commented, "config.example.yaml: %s (line %d) has no comment", key, line)
	}
}

// collectKeys records the line of every key path in a YAML mapping; list
// items are recorded as [0].
func collectKeys(n *yaml.Node, prefix string, out map[string]int) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := prefix + n.Content[i].Value
			out[k] = n.Content[i].Line
			collectKeys(n.Content[i+1], k+".", out)
		}
	case yaml.SequenceNode:
		for _, item := range n.Content {
			collectKeys(item, strings.TrimSuffix(prefix, ".")+"[0].", out)
		}
	}
}

func structKeys(t reflect.Type, prefix string) []string {
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		key := prefix + f.Tag.Get("mapstructure")
		switch {
		case f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeOf(time.Duration(0)):
			keys = append(keys, structKeys(f.Type, key+".")...)
		case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct:
			keys = append(keys, structKeys(f.Type.Elem(), key+"[0].")...)
		case f.Type.Kind() == reflect.Map && f.Type.Elem().Kind() == reflect.Struct:
			// Named sections (policies): the example documents one, named
			// partner-a.
			keys = append(keys, structKeys(f.Type.Elem(), key+".partner-a.")...)
		default:
			keys = append(keys, key)
		}
	}
	return keys
}

func TestLoad(t *testing.T) {
	const route = "routes:\n  - {name: a, path: /a, backend: \"http://127.0.0.1:1\"}\n"
	ca, err := filepath.Abs(filepath.Join("..", "..", "examples", "keys", "ca.crt"))
	require.NoError(t, err)
	tests := map[string]struct {
		file  string
		env   map[string]string
		check func(t *testing.T, cfg *config.Config, err error)
	}{
		"ok/defaults-fill-missing": {route, nil, func(t *testing.T, cfg *config.Config, err error) {
			require.NoError(t, err)
			assert.Equal(t, config.DefaultMaxBodyBytes, cfg.Routes[0].MaxBodyBytes)
			assert.Equal(t, config.DefaultBackendTimeout, cfg.Routes[0].Timeouts.Backend)
		}},
		"ok/partial-section-keeps-defaults": {"routes:\n  - {name: a, path: /a, backend: \"http://h\", timeouts: {backend: 2s}, maxBodyBytes: 1MiB}\n", nil,
			func(t *testing.T, cfg *config.Config, err error) {
				require.NoError(t, err)
				assert.Equal(t, 2*time.Second, cfg.Routes[0].Timeouts.Backend)
				assert.Equal(t, config.DefaultReadTimeout, cfg.Routes[0].Timeouts.Read)
				assert.Equal(t, config.ByteSize(1<<20), cfg.Routes[0].MaxBodyBytes)
			}},
		"ok/env-overrides-file": {"log: {level: warn}\n" + route, map[string]string{"WSSGW_LOG_LEVEL": "debug", "WSSGW_SHUTDOWN_DRAINTIMEOUT": "7s", "WSSGW_SERVER_MAXHEADERBYTES": "2KiB"},
			func(t *testing.T, cfg *config.Config, err error) {
				require.NoError(t, err)
				assert.Equal(t, "debug", cfg.Log.Level)
				assert.Equal(t, 7*time.Second, cfg.Shutdown.DrainTimeout)
				assert.Equal(t, config.ByteSize(2048), cfg.Server.MaxHeaderBytes)
			}},
		"fail/unknown-keys": {"bogus: 1\nadmin: {listen: \"127.0.0.1:1\", pprofs: true}\nroutes:\n  - {name: a, path: /a, backend: \"http://h\", timeouts: {reed: 1s}}\n", nil,
			func(t *testing.T, _ *config.Config, err error) {
				ps := problems(t, err)
				assert.Equal(t, map[string]string{
					"bogus": "unknown key", "admin.pprofs": "unknown key; did you mean admin.pprof?",
					"routes[0].timeouts.reed": "unknown key; did you mean routes[0].timeouts.read?",
				}, ps)
			}},
		"fail/explicit-zero-is-not-default": {"routes:\n  - {name: a, path: /a, backend: \"http://h\", maxBodyBytes: 0, timeouts: {read: 0s}}\n", nil,
			func(t *testing.T, _ *config.Config, err error) {
				ps := problems(t, err)
				assert.Contains(t, ps, "routes[0].maxBodyBytes")
				assert.Contains(t, ps, "routes[0].timeouts.read")
			}},
		"fail/decode-and-validate-together": {"listen: nope\nshutdown: {drainTimeout: later}\n" + route, nil,
			func(t *testing.T, _ *config.Config, err error) {
				ps := problems(t, err)
				assert.Len(t, ps, 2)
				assert.Contains(t, ps["shutdown.drainTimeout"], "invalid duration")
				assert.Contains(t, ps["listen"], "host:port")
			}},
		"fail/bad-env": {route, map[string]string{"WSSGW_ADMIN_PPROF": "maybe"},
			func(t *testing.T, _ *config.Config, err error) {
				assert.Contains(t, problems(t, err), "admin.pprof")
			}},
		"ok/zero-duration-without-unit": {"shutdown: {delay: 0}\nserver: {writeTimeout: 0}\n" + route, nil,
			func(t *testing.T, cfg *config.Config, err error) {
				require.NoError(t, err)
				assert.Zero(t, cfg.Shutdown.Delay)
				assert.Zero(t, cfg.Server.WriteTimeout)
			}},
		"ok/env-duration-with-unit": {route, map[string]string{"WSSGW_SERVER_IDLETIMEOUT": "90s"},
			func(t *testing.T, cfg *config.Config, err error) {
				require.NoError(t, err)
				assert.Equal(t, 90*time.Second, cfg.Server.IdleTimeout)
			}},
		"fail/duration-without-unit": {"routes:\n  - {name: a, path: /a, backend: \"http://h\", timeouts: {backend: 5}}\n", nil,
			func(t *testing.T, _ *config.Config, err error) {
				// One mistake, one problem: no "must be positive" beside it.
				assert.Equal(t, map[string]string{
					"routes[0].timeouts.backend": "duration 5 needs a unit such as 5s (500ms, 30s, 2m; a bare number would be nanoseconds)",
				}, problems(t, err))
			}},
		"fail/duration-without-unit-quoted": {"shutdown: {drainTimeout: \"30\"}\n" + route, nil,
			func(t *testing.T, _ *config.Config, err error) {
				assert.Equal(t, map[string]string{
					"shutdown.drainTimeout": "duration 30 needs a unit such as 5s (500ms, 30s, 2m; a bare number would be nanoseconds)",
				}, problems(t, err))
			}},
		"fail/duration-fraction-without-unit": {"server: {idleTimeout: 1.5}\n" + route, nil,
			func(t *testing.T, _ *config.Config, err error) {
				assert.Contains(t, problems(t, err)["server.idleTimeout"], "duration 1.5 needs a unit such as 5s")
			}},
		"fail/env-duration-without-unit": {route, map[string]string{"WSSGW_SHUTDOWN_DRAINTIMEOUT": "10"},
			func(t *testing.T, _ *config.Config, err error) {
				assert.Equal(t, map[string]string{
					"shutdown.drainTimeout": "duration 10 needs a unit such as 5s (500ms, 30s, 2m; a bare number would be nanoseconds)",
				}, problems(t, err))
			}},
		"fail/bad-duration-echoes-value": {"shutdown: {drainTimeout: 5 s}\n" + route, nil,
			func(t *testing.T, _ *config.Config, err error) {
				assert.Equal(t, map[string]string{
					"shutdown.drainTimeout": `invalid duration "5 s": write a number with a unit such as 500ms, 30s or 2m`,
				}, problems(t, err))
			}},
		"fail/env-unknown-variable": {route, map[string]string{"WSSGW_LOGG_LEVEL": "debug"},
			func(t *testing.T, _ *config.Config, err error) {
				assert.Equal(t, map[string]string{
					"WSSGW_LOGG_LEVEL": `unknown environment variable (value "debug"); did you mean WSSGW_LOG_LEVEL?`,
				}, problems(t, err))
			}},
		"fail/env-unknown-variable-far-from-any": {route, map[string]string{"WSSGW_ZZZZZZZZZZZZZZZZZZ": "1"},
			func(t *testing.T, _ *config.Config, err error) {
				assert.Equal(t, map[string]string{"WSSGW_ZZZZZZZZZZZZZZZZZZ": `unknown environment variable (value "1")`}, problems(t, err))
			}},
		"ok/kubernetes-service-links-are-not-config": {route, map[string]string{
			"WSSGW_SERVICE_HOST": "10.0.0.1", "WSSGW_SERVICE_PORT": "8080", "WSSGW_SERVICE_PORT_SOAP": "8080",
			"WSSGW_PORT": "tcp://10.0.0.1:8080", "WSSGW_PORT_8080_TCP": "tcp://10.0.0.1:8080",
			"WSSGW_PORT_8080_TCP_ADDR": "10.0.0.1", "WSSGW_ADMIN_SERVICE_HOST": "10.0.0.2",
		}, func(t *testing.T, _ *config.Config, err error) {
			require.NoError(t, err)
		}},
		"fail/unknown-keys-keep-their-case": {"Bogus: 1\nadmin: {listen: \"127.0.0.1:1\", pprofS: true}\nroutes:\n  - {name: a, path: /a, backend: \"http://h\", timeouts: {Reed: 1s}}\n", nil,
			func(t *testing.T, _ *config.Config, err error) {
				assert.Equal(t, map[string]string{
					"Bogus": "unknown key", "admin.pprofS": "unknown key; did you mean admin.pprof?",
					"routes[0].timeouts.Reed": "unknown key; did you mean routes[0].timeouts.read?",
				}, problems(t, err))
			}},
		"fail/policy-key-path-one-spelling": {"routes:\n  - {name: a, path: /a, backend: \"http://h\", policy: pv}\npolicies:\n  pv:\n    trust: {caFiles: [/nonexistent/ca.crt]}\n    timestamp: {maxAge: 5}\n", nil,
			func(t *testing.T, _ *config.Config, err error) {
				// The policy that failed to decode is not also an "unknown
				// policy" of the route naming it.
				assert.Equal(t, map[string]string{
					"policies.pv.timestamp.maxAge": "duration 5 needs a unit such as 5s (500ms, 30s, 2m; a bare number would be nanoseconds)",
				}, problems(t, err))
			}},
		"fail/list-element-key-path": {"routes:\n  - {name: a, path: /a, backend: \"http://h\", policy: pv}\npolicies:\n  pv:\n    trust: {caFiles: [" + ca + ", /nonexistent/ca.crt]}\n", nil,
			func(t *testing.T, _ *config.Config, err error) {
				ps := problems(t, err)
				assert.Equal(t, map[string]string{
					"policies.pv.trust.caFiles[1]": `cannot read "/nonexistent/ca.crt": no such file or directory`,
				}, ps)
			}},
		"fail/decode-errors-echo-the-value": {"admin: {pprof: maybe}\nxml: {maxDepth: deep}\nroutes:\n  - {name: a, path: /a, backend: \"http://h\", maxBodyBytes: lots, maxIdleConns: abc}\n", nil,
			func(t *testing.T, _ *config.Config, err error) {
				assert.Equal(t, map[string]string{
					"admin.pprof":            `invalid value "maybe": want true or false`,
					"xml.maxDepth":           `invalid value "deep": want a whole number`,
					"routes[0].maxBodyBytes": `invalid size "lots": want an integer with an optional KiB, MiB or GiB suffix`,
					"routes[0].maxIdleConns": `invalid value "abc": want a whole number`,
				}, problems(t, err))
			}},
		"fail/policy-name-not-lower-case": {"routes:\n  - {name: a, path: /a, backend: \"http://h\", policy: PartnerA}\npolicies:\n  PartnerA:\n    trust: {caFiles: [" + ca + "]}\n", nil,
			func(t *testing.T, _ *config.Config, err error) {
				// Viper knows the policy as partnera; the route naming
				// PartnerA is not a second problem.
				assert.Equal(t, map[string]string{
					"policies.PartnerA": `policy names must be 1-64 characters of a-z, 0-9, '-' and '_', got "PartnerA"`,
				}, problems(t, err))
			}},
		"fail/not-yaml": {"routes: [\n", nil, func(t *testing.T, _ *config.Config, err error) {
			require.Error(t, err)
			var ps config.Problems
			assert.False(t, errors.As(err, &ps), "an unreadable file is not a list of problems")
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			cfg, err := loadConfig(writeConfig(t, tc.file), nil)
			tc.check(t, cfg, err)
		})
	}
}

func TestFlagsOverrideEnvironment(t *testing.T) {
	t.Setenv("WSSGW_LISTEN", "127.0.0.1:7000")
	cmd := newServeCmd()
	require.NoError(t, cmd.Flags().Parse([]string{"--listen", "127.0.0.1:7001", "--log-format", "text"}))
	cfg, err := loadConfig(writeConfig(t, "listen: 127.0.0.1:6999\nroutes:\n  - {name: a, path: /a, backend: \"http://h\"}\n"), cmd.Flags())
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:7001", cfg.Listen)
	assert.Equal(t, "text", cfg.Log.Format)

	cmd = newServeCmd()
	cfg, err = loadConfig(writeConfig(t, "listen: 127.0.0.1:6999\nroutes:\n  - {name: a, path: /a, backend: \"http://h\"}\n"), cmd.Flags())
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:7000", cfg.Listen, "unset flags must not hide the environment")
}

func Example_validate() {
	cmd := newRootCmd()
	cmd.SetArgs([]string{"validate", "--config", example})
	if err := cmd.Execute(); err != nil {
		fmt.Println(err)
	}
	// Output: ../../config.example.yaml: ok
}
