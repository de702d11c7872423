package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/wssgw/wssgw/internal/testpki"
)

func TestValidateOCSP(t *testing.T) {
	dir := t.TempDir()
	cert, _ := writeKeyPair(t, dir)
	partner := writePartnerCert(t, dir)
	const k = "policies.p.trust.ocsp"
	on := func(o *OCSP) { o.Enabled = true }
	known := func(o *OCSP) { on(o); o.ResponderURL = "" } // the partner cert has no AIA
	tests := map[string]struct {
		mutate   func(o *OCSP)
		noAnchor bool
		partner  bool // knownCertFiles lists a certificate without an OCSP responder
		want     []string
	}{
		"ok/partner-without-aia-override": {mutate: func(o *OCSP) { on(o); o.ResponderURL = "http://ocsp.example/" }, partner: true},
		"ok/partner-without-aia-accept":   {mutate: func(o *OCSP) { on(o); o.OnUnknown = OCSPAccept }, partner: true},
		"fail/partner-without-aia":        {mutate: known, partner: true, want: []string{k + ".responderURL"}},
		"ok/off-with-nonsense":            {mutate: func(o *OCSP) { o.OnUnknown, o.Refresh = "maybe", -1 }},
		"ok/defaults":                     {mutate: on},
		"ok/everything": {mutate: func(o *OCSP) {
			on(o)
			o.ResponderURL, o.MaxStaleness, o.OnUnknown, o.OnStale = "https://ocsp.example/", time.Hour, OCSPAccept, OCSPAccept
		}},
		"fail/enums": {mutate: func(o *OCSP) { on(o); o.OnUnknown, o.OnStale = "warn", "Reject" },
			want: []string{k + ".onUnknown", k + ".onStale"}},
		"fail/durations": {mutate: func(o *OCSP) { on(o); o.Refresh, o.Timeout, o.MaxStaleness = 0, 0, -time.Second },
			want: []string{k + ".refresh", k + ".timeout", k + ".maxStaleness"}},
		"fail/timeout-over-refresh": {mutate: func(o *OCSP) { on(o); o.Refresh, o.Timeout = time.Second, time.Minute },
			want: []string{k + ".timeout"}},
		"fail/responder-url": {mutate: func(o *OCSP) { on(o); o.ResponderURL = "ldap://ca.example/" },
			want: []string{k + ".responderURL"}},
		"fail/responder-url-no-host": {mutate: func(o *OCSP) { on(o); o.ResponderURL = "http:///ocsp" },
			want: []string{k + ".responderURL"}},
		"fail/nothing-to-check": {mutate: on, noAnchor: true, want: []string{k + ".enabled"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := valid()
			p := DefaultPolicy()
			if !tc.noAnchor {
				p.Trust.CAFiles = []string{cert}
			} else {
				p.Require = []string{RequireTimestamp}
			}
			if tc.partner {
				p.Trust.KnownCertFiles = []string{partner}
			}
			tc.mutate(&p.Trust.OCSP)
			c.Policies = map[string]Policy{"p": p}
			c.Routes[0].Policy = "p"
			assert.ElementsMatch(t, tc.want, problemKeys(t, c))
		})
	}
}

func TestValidateOCSPNamesTheValue(t *testing.T) {
	c := valid()
	p := DefaultPolicy()
	p.Require = []string{RequireTimestamp}
	p.Trust.KnownCertFiles = nil
	p.Trust.OCSP.Enabled, p.Trust.OCSP.OnStale = true, "ignore"
	c.Policies = map[string]Policy{"p": p}
	c.Routes[0].Policy = "p"
	err := c.Validate()
	assert.ErrorContains(t, err, `policies.p.trust.ocsp.onStale: must be one of reject, accept, got "ignore"`)
}

func TestApplyDefaultsOCSP(t *testing.T) {
	c := valid()
	c.Policies = map[string]Policy{"p": {Trust: Trust{OCSP: OCSP{Enabled: true, OnStale: OCSPAccept}}}}
	c.ApplyDefaults()
	o := c.Policies["p"].Trust.OCSP
	d := DefaultOCSP()
	assert.Equal(t, OCSPAccept, o.OnStale, "a set value is kept")
	assert.Equal(t, d.OnUnknown, o.OnUnknown)
	assert.Equal(t, d.Refresh, o.Refresh)
	assert.Equal(t, d.Timeout, o.Timeout)
	assert.Zero(t, o.MaxStaleness, "no grace unless configured")
	opts := o.Options()
	assert.True(t, opts.RejectUnknown)
	assert.False(t, opts.RejectStale)
}

// writePartnerCert writes a CA-issued partner certificate without an
// Authority Information Access extension.
func writePartnerCert(t *testing.T, dir string) string {
	return testpki.NewCA(t, "Partner CA").Issue(t, dir, "partner").CertFile
}
