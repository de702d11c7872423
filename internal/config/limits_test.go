package config

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestValidateLimits: routes[].limits and clients are checked as a whole;
// each problem names the exact key and echoes the value.
func TestValidateLimits(t *testing.T) {
	tests := map[string]struct {
		mutate func(c *Config)
		want   map[string]string // key: a part of its message
	}{
		"ok/none": {func(*Config) {}, nil},
		"ok/all": {func(c *Config) {
			c.Routes[0].Limits = RouteLimits{Total: Limit{Rate: 100, Burst: 200, MaxConcurrent: 64}, PerClient: Limit{Rate: 0.5}}
			c.Clients = Clients{TrustedProxies: []string{"10.0.0.0/8", "192.0.2.1", "2001:db8::/32", "::ffff:10.0.0.0/104"}, IPv6PrefixLength: 128, MaxTracked: 1}
		}, nil},
		"ok/per-signer-on-secured-route": {func(c *Config) {
			p := DefaultPolicy()
			p.Require, p.SignedParts = []string{"usernameToken"}, []string{}
			p.UsernameToken.CredentialsFile = filepath.Join(t.TempDir(), "users")
			require.NoError(t, os.WriteFile(p.UsernameToken.CredentialsFile, []byte("alice:secret\n"), 0o600))
			c.Policies = map[string]Policy{"p": p}
			c.Routes[0].Policy = "p"
			c.Routes[0].Limits.PerSigner = Limit{MaxConcurrent: 4}
		}, nil},
		"fail/negative": {func(c *Config) {
			c.Routes[0].Limits.Total = Limit{Rate: -1, Burst: -2, MaxConcurrent: -3}
		}, map[string]string{
			"routes[0].limits.total.rate": "got -1", "routes[0].limits.total.burst": "got -2",
			"routes[0].limits.total.maxConcurrent": "got -3",
		}},
		"fail/not-a-number": {func(c *Config) { c.Routes[0].Limits.PerClient.Rate = math.NaN() }, map[string]string{
			"routes[0].limits.perClient.rate": "got NaN",
		}},
		"fail/burst-without-rate": {func(c *Config) { c.Routes[0].Limits.PerClient = Limit{Burst: 5} }, map[string]string{
			"routes[0].limits.perClient.burst": "is set (5) but rate is not",
		}},
		"fail/per-signer-on-policy-none": {func(c *Config) { c.Routes[0].Limits.PerSigner = Limit{Rate: 1} }, map[string]string{
			"routes[0].limits.perSigner": `got policy "none"`,
		}},
		"fail/clients": {func(c *Config) {
			c.Clients = Clients{TrustedProxies: []string{"10.0.0.0/8", "10.0.0.0/33", "proxy.local", "0.0.0.0/0"}, IPv6PrefixLength: 16, MaxTracked: 0}
		}, map[string]string{
			"clients.trustedProxies[1]": `got "10.0.0.0/33"`, "clients.trustedProxies[2]": `got "proxy.local"`,
			"clients.trustedProxies[3]": `must not trust every address, got "0.0.0.0/0"`,
			"clients.ipv6PrefixLength":  "got 16", "clients.maxTracked": "got 0",
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := valid()
			tc.mutate(&c)
			got := map[string]string{}
			var ps Problems
			if err := c.Validate(); err != nil {
				require.ErrorAs(t, err, &ps)
			}
			for _, p := range ps {
				got[p.Key] = p.Msg
			}
			assert.Len(t, got, len(tc.want), "problems: %v", got)
			for k, part := range tc.want {
				assert.Contains(t, got[k], part, "key %s", k)
			}
		})
	}
}

func TestEffectiveBurst(t *testing.T) {
	assert.Equal(t, 1, Limit{Rate: 0.2}.EffectiveBurst())
	assert.Equal(t, 3, Limit{Rate: 2.5}.EffectiveBurst())
	assert.Equal(t, 7, Limit{Rate: 2.5, Burst: 7}.EffectiveBurst())
}

func TestClientsPrefixes(t *testing.T) {
	c := Clients{TrustedProxies: []string{"10.1.2.3/8", "192.0.2.1", "::ffff:10.0.0.0/104", "bad"}}
	var got []string
	for _, p := range c.Prefixes() {
		got = append(got, p.String())
	}
	assert.Equal(t, []string{"10.0.0.0/8", "192.0.2.1/32", "10.0.0.0/8"}, got)
}
