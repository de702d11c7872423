package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFiles(t *testing.T) {
	cfg := Default()
	cfg.TLS.CertFile, cfg.TLS.KeyFile = "/k/tls.crt", "/k/tls.key"
	cfg.Routes = []Route{{Name: "a", BackendTLS: BackendTLS{CAFile: "/k/ca.crt", CertFile: "/k/client.crt", KeyFile: "/k/client.key"}}}
	p := DefaultPolicy()
	p.Trust.CAFiles = []string{"/k/ca.crt", "/k/partner-ca.crt"}
	p.UsernameToken.CredentialsFile = "/k/users"
	cfg.Policies = map[string]Policy{"p": p}
	assert.Equal(t, []string{
		"/k/ca.crt", "/k/client.crt", "/k/client.key", "/k/partner-ca.crt", "/k/tls.crt", "/k/tls.key", "/k/users",
	}, cfg.Files(), "every file once, sorted; empty keys left out")
}

// TestResolveFiles: relative names (in structs, lists and the policies
// map) are joined to the config file's directory; absolute and empty ones
// stay, and nothing else changes.
func TestResolveFiles(t *testing.T) {
	cfg := Default()
	cfg.TLS.CertFile = "tls.crt"
	cfg.Routes = []Route{{Name: "a", Path: "rel", BackendTLS: BackendTLS{CAFile: "/k/ca.crt", CertFile: "client.crt"}}}
	p := DefaultPolicy()
	p.Trust.CAFiles = []string{"partner-ca.crt", "/k/other-ca.crt"}
	cfg.Policies = map[string]Policy{"p": p}
	cfg.ResolveFiles("/etc/wssgw")
	assert.Equal(t, "/etc/wssgw/tls.crt", cfg.TLS.CertFile)
	assert.Empty(t, cfg.TLS.KeyFile)
	assert.Equal(t, "rel", cfg.Routes[0].Path, "not a file key")
	assert.Equal(t, "/k/ca.crt", cfg.Routes[0].BackendTLS.CAFile)
	assert.Equal(t, "/etc/wssgw/client.crt", cfg.Routes[0].BackendTLS.CertFile)
	assert.Equal(t, []string{"/etc/wssgw/partner-ca.crt", "/k/other-ca.crt"}, cfg.Policies["p"].Trust.CAFiles)
}
