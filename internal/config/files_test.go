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
