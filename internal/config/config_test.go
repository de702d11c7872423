package config

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestByteSize(t *testing.T) {
	tests := map[string]struct {
		in   string
		want ByteSize
		ok   bool
	}{
		"ok/plain":      {"1048576", 1 << 20, true},
		"ok/kib":        {"512KiB", 512 << 10, true},
		"ok/mib-spaced": {" 10 MiB ", 10 << 20, true},
		"ok/gib":        {"1GiB", 1 << 30, true},
		"ok/bytes":      {"100B", 100, true},
		"fail/unit":     {"10MB", 0, false},
		"fail/negative": {"-1", 0, false},
		"fail/float":    {"1.5MiB", 0, false},
		"fail/overflow": {"9999999999999GiB", 0, false},
		"fail/empty":    {"", 0, false},
		"fail/word":     {"lots", 0, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var s ByteSize
			err := s.UnmarshalText([]byte(tc.in))
			if !tc.ok {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, s)
		})
	}
	assert.Equal(t, "10MiB", ByteSize(10<<20).String())
	assert.Equal(t, "1000", ByteSize(1000).String())
}

// valid is a configuration that passes Validate.
func valid() Config {
	c := Default()
	c.Routes = []Route{{Name: "orders", Path: "/orders", Backend: "http://127.0.0.1:9000"}}
	c.ApplyDefaults()
	return c
}

// problemKeys runs Validate and returns the keys it names.
func problemKeys(t *testing.T, c Config) []string {
	t.Helper()
	err := c.Validate()
	if err == nil {
		return nil
	}
	var ps Problems
	require.True(t, errors.As(err, &ps), "Validate must return Problems, got %T", err)
	keys := make([]string, len(ps))
	for i, p := range ps {
		keys[i] = p.Key
		assert.NotEmpty(t, p.Msg)
	}
	return keys
}

func TestValidate(t *testing.T) {
	dir := t.TempDir()
	cert, key := writeKeyPair(t, dir)
	tests := map[string]struct {
		mutate func(c *Config)
		want   []string
	}{
		"ok/defaults":        {func(*Config) {}, nil},
		"ok/root-route":      {func(c *Config) { c.Routes[0].Path = "/" }, nil},
		"ok/port-zero-twice": {func(c *Config) { c.Listen, c.Admin.Listen = "127.0.0.1:0", "127.0.0.1:0" }, nil},
		"ok/tls":             {func(c *Config) { c.TLS.CertFile, c.TLS.KeyFile = cert, key }, nil},
		"ok/mtls": {func(c *Config) {
			c.TLS = ServerTLS{CertFile: cert, KeyFile: key, ClientCAFile: cert, ClientAuth: "require", MinVersion: "1.3"}
		}, nil},
		"ok/https-backend": {func(c *Config) {
			c.Routes[0].Backend = "https://svc.local:8443"
			c.Routes[0].BackendTLS = BackendTLS{CAFile: cert, CertFile: cert, KeyFile: key, ServerName: "svc"}
		}, nil},
		"fail/listen":           {func(c *Config) { c.Listen = "8080" }, []string{"listen"}},
		"fail/listen-port":      {func(c *Config) { c.Listen = "127.0.0.1:http" }, []string{"listen"}},
		"fail/same-port":        {func(c *Config) { c.Admin.Listen = c.Listen }, []string{"admin.listen"}},
		"fail/log":              {func(c *Config) { c.Log = Log{Format: "xml", Level: "trace"} }, []string{"log.format", "log.level"}},
		"fail/drain":            {func(c *Config) { c.Shutdown = Shutdown{Delay: -1, DrainTimeout: 0} }, []string{"shutdown.delay", "shutdown.drainTimeout"}},
		"fail/server":           {func(c *Config) { c.Server = Server{WriteTimeout: -1, Memory: DefaultMemory()} }, []string{"server.readHeaderTimeout", "server.idleTimeout", "server.writeTimeout", "server.maxHeaderBytes"}},
		"fail/tls-half":         {func(c *Config) { c.TLS.CertFile = cert }, []string{"tls.keyFile"}},
		"fail/tls-bad-files":    {func(c *Config) { c.TLS.CertFile, c.TLS.KeyFile = key, cert }, []string{"tls.certFile"}},
		"fail/client-ca-no-tls": {func(c *Config) { c.TLS.ClientCAFile = cert }, []string{"tls.certFile"}},
		"fail/require-no-ca": {func(c *Config) {
			c.TLS = ServerTLS{CertFile: cert, KeyFile: key, ClientAuth: "require", MinVersion: "1.2"}
		}, []string{"tls.clientCAFile"}},
		"fail/ca-not-pem": {func(c *Config) {
			c.TLS = ServerTLS{CertFile: cert, KeyFile: key, ClientCAFile: filepath.Join(dir, "none"), ClientAuth: "request", MinVersion: "1.0"}
		}, []string{"tls.clientCAFile", "tls.minVersion"}},
		"ok/unsafe-skip-gate": {func(c *Config) { c.Routes[0].UnsafeSkipGate = true }, nil},
		"fail/unsafe-skip-gate-secured": {func(c *Config) {
			c.Routes[0].UnsafeSkipGate, c.Routes[0].Policy = true, "p"
		}, []string{"routes[0].policy", "routes[0].unsafeSkipGate"}},
		"fail/no-routes": {func(c *Config) { c.Routes = nil }, []string{"routes"}},
		"fail/xml-encryption-counts": {func(c *Config) {
			c.XML.MaxEncryptedKeys, c.XML.MaxEncryptedData = 0, -1
		}, []string{"xml.maxEncryptedKeys", "xml.maxEncryptedData"}},
		"fail/route-fields": {func(c *Config) {
			c.Routes[0] = Route{Name: "Orders", Path: "orders", Backend: "ftp://x", Policy: "p", MaxIdleConns: -1}
		}, []string{
			"routes[0].name", "routes[0].path", "routes[0].backend", "routes[0].policy", "routes[0].maxBodyBytes",
			"routes[0].maxIdleConns", "routes[0].timeouts.read", "routes[0].timeouts.connect",
			"routes[0].timeouts.backend", "routes[0].timeouts.idle", "routes[0].timeouts.backendBodyIdle",
		}},
		"fail/path-shapes": {func(c *Config) {
			r := c.Routes[0]
			c.Routes = nil
			for i, p := range []string{"/a/", "/a?b", "/a//b", "/a/../b", "/%41", "/a/./b", "/a/.", "/a;jsessionid=1", "/a\\b", "/a\tb"} {
				r.Name, r.Path = string(rune('a'+i)), p
				c.Routes = append(c.Routes, r)
			}
		}, []string{"routes[0].path", "routes[1].path", "routes[2].path", "routes[3].path", "routes[4].path",
			"routes[5].path", "routes[6].path", "routes[7].path", "routes[8].path", "routes[9].path"}},
		"fail/backend-shapes": {func(c *Config) {
			r := c.Routes[0]
			c.Routes = nil
			for i, b := range []string{"", "http://", "http://u:p@h", "http://h/?q=1", "://"} {
				r.Name, r.Path, r.Backend = string(rune('a'+i)), "/"+string(rune('a'+i)), b
				c.Routes = append(c.Routes, r)
			}
		}, []string{"routes[0].backend", "routes[1].backend", "routes[2].backend", "routes[3].backend", "routes[4].backend"}},
		"fail/duplicates": {func(c *Config) { c.Routes = append(c.Routes, c.Routes[0]) }, []string{"routes[1].name", "routes[1].path"}},
		"fail/backend-tls-on-http": {func(c *Config) {
			c.Routes[0].BackendTLS.CAFile = cert
		}, []string{"routes[0].backendTLS"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := valid()
			tc.mutate(&c)
			assert.ElementsMatch(t, tc.want, problemKeys(t, c))
		})
	}
}

func TestProblemsError(t *testing.T) {
	var ps Problems
	assert.NoError(t, ps.Err())
	ps.add("a.b", "is %s", "wrong")
	ps.add("c", "too")
	assert.Equal(t, "config: 2 problem(s):\n  a.b: is wrong\n  c: too", ps.Err().Error())
}

func TestApplyDefaultsKeepsSetValues(t *testing.T) {
	c := Config{Routes: []Route{{MaxBodyBytes: 1, Timeouts: RouteTimeouts{Backend: time.Second}}}}
	c.ApplyDefaults()
	r := c.Routes[0]
	assert.Equal(t, ByteSize(1), r.MaxBodyBytes)
	assert.Equal(t, time.Second, r.Timeouts.Backend)
	assert.Equal(t, DefaultReadTimeout, r.Timeouts.Read)
	assert.Equal(t, PolicyNone, r.Policy)
}

// writeKeyPair writes a self-signed certificate and its key as PEM files.
func writeKeyPair(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600))
	return certFile, keyFile
}

// TestValidateEchoesValue: each problem names the exact key, list elements
// and named sections included, and echoes the offending value.
func TestValidateEchoesValue(t *testing.T) {
	dir := t.TempDir()
	cert, _ := writeKeyPair(t, dir)
	missing := filepath.Join(dir, "missing.crt")
	tests := map[string]struct {
		mutate func(c *Config)
		key    string
		value  string
	}{
		"fail/route-timeout":              {func(c *Config) { c.Routes[0].Timeouts.Backend = -5 * time.Second }, "routes[0].timeouts.backend", "-5s"},
		"fail/body-idle-timeout":          {func(c *Config) { c.Routes[0].Timeouts.BackendBodyIdle = -time.Second }, "routes[0].timeouts.backendBodyIdle", "-1s"},
		"fail/backend-tls-on-http":        {func(c *Config) { c.Routes[0].BackendTLS.CAFile = cert }, "routes[0].backendTLS", "http://127.0.0.1:9000"},
		"fail/templates-max-bytes":        {func(c *Config) { c.Templates.MaxBytes = 1024 }, "templates.maxBytes", "1KiB"},
		"fail/templates-learn-rate":       {func(c *Config) { c.Templates.LearnPerSecond = -2 }, "templates.learnPerSecond", "-2"},
		"fail/templates-max":              {func(c *Config) { c.Templates.MaxTemplates = 0 }, "templates.maxTemplates", "got 0"},
		"fail/templates-burst":            {func(c *Config) { c.Templates.LearnBurst = -1 }, "templates.learnBurst", "-1"},
		"fail/templates-learn-after-zero": {func(c *Config) { c.Templates.LearnAfter = 0 }, "templates.learnAfter", "got 0"},
		"fail/templates-learn-after-big":  {func(c *Config) { c.Templates.LearnAfter = 17 }, "templates.learnAfter", "got 17"},
		"fail/policy-name": {func(c *Config) {
			c.Policies = map[string]Policy{"Bad Name": DefaultPolicy()}
		}, "policies.Bad Name", `"Bad Name"`},
		"fail/ca-file-element": {func(c *Config) {
			p := DefaultPolicy()
			p.Trust.CAFiles = []string{cert, missing}
			c.Policies = map[string]Policy{"pv": p}
		}, "policies.pv.trust.caFiles[1]", missing},
		"fail/known-cert-element": {func(c *Config) {
			p := DefaultPolicy()
			p.Trust.CAFiles = []string{cert}
			p.Trust.KnownCertFiles = []string{missing}
			c.Policies = map[string]Policy{"pv": p}
		}, "policies.pv.trust.knownCertFiles[0]", missing},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := valid()
			tc.mutate(&c)
			var ps Problems
			require.True(t, errors.As(c.Validate(), &ps))
			msgs := map[string]string{}
			for _, p := range ps {
				msgs[p.Key] = p.Msg
			}
			require.Contains(t, msgs, tc.key, "problems: %v", ps)
			assert.Contains(t, msgs[tc.key], tc.value)
			if strings.Contains(name, "element") {
				assert.Len(t, ps, 1, "an unreadable file is one problem, not also the store's: %v", ps)
			}
		})
	}
}
