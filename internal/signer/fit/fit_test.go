package fit

import (
	"encoding/xml"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/testpki"
)

func TestPolicy(t *testing.T) {
	dir := t.TempDir()
	ca := testpki.NewCA(t, "fit CA")
	ec := ca.Issue(t, dir, "ec")         // P-256
	rsaKey := ca.IssueRSA(t, dir, "rsa") // RSA-2048
	header := "{urn:h}Route"

	tests := []struct {
		name   string
		leaf   *testpki.Leaf
		policy func(p *config.Policy)
		opts   func(o *signer.Options)
		check  func(t *testing.T, o *signer.Options)
		want   string // in the error; "" for success
		note   string // in a note
	}{
		{name: "ok/ecdsa-defaults", leaf: ec, check: func(t *testing.T, o *signer.Options) {
			assert.Equal(t, crypto.AlgECDSASHA256, o.SignatureAlgorithm)
			assert.Equal(t, crypto.AlgDigestSHA256, o.DigestAlgorithm)
		}, note: "trusts no certificate"},
		{name: "ok/rsa-allow-list-picks-sha512", leaf: rsaKey, policy: func(p *config.Policy) {
			p.Algorithms.Allow = []string{crypto.AlgRSASHA512, crypto.AlgDigestSHA512}
		}, check: func(t *testing.T, o *signer.Options) {
			assert.Equal(t, crypto.AlgRSASHA512, o.SignatureAlgorithm)
			assert.Equal(t, crypto.AlgDigestSHA512, o.DigestAlgorithm)
		}},
		{name: "ok/signed-header-added", leaf: ec, policy: func(p *config.Policy) {
			p.SignedParts = []string{config.PartBody, header}
		}, check: func(t *testing.T, o *signer.Options) {
			assert.Contains(t, o.SignHeaders, xml.Name{Space: "urn:h", Local: "Route"})
		}},
		{name: "fail/role", leaf: ec, policy: func(p *config.Policy) { p.Role = "urn:role" }, want: "role"},
		{name: "fail/username-token", leaf: ec, policy: func(p *config.Policy) {
			p.Require = append(p.Require, config.RequireUsernameToken)
		}, want: "UsernameToken"},
		{name: "fail/timestamp-without-ttl", leaf: ec, opts: func(o *signer.Options) { o.TTL = -1 }, want: "--ttl"},
		{name: "fail/no-signature-algorithm-for-key", leaf: ec, policy: func(p *config.Policy) {
			p.Algorithms.Allow = []string{crypto.AlgRSASHA256, crypto.AlgDigestSHA256}
		}, want: "no signature algorithm for a ECDSA key"},
		{name: "fail/header-encryption", leaf: ec, policy: func(p *config.Policy) {
			p.EncryptedParts = []string{header}
		}, want: "encrypts the Body only"},
		{name: "fail/encrypt-for-ec", leaf: ec, opts: func(o *signer.Options) { o.EncryptFor = ec.Cert }, want: "needs an RSA certificate"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := config.DefaultPolicy()
			if tc.policy != nil {
				tc.policy(&p)
			}
			o := signer.DefaultOptions()
			o.Signer, o.Certificate = tc.leaf.Key, tc.leaf.Cert
			if tc.opts != nil {
				tc.opts(&o)
			}
			var notes []string
			note := func(format string, args ...any) { notes = append(notes, fmt.Sprintf(format, args...)) }
			err := Policy("p", p, &o, note)
			if tc.want != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "would not fit policy p")
				assert.Contains(t, err.Error(), tc.want)
				return
			}
			require.NoError(t, err)
			if tc.check != nil {
				tc.check(t, &o)
			}
			if tc.note != "" {
				require.NotEmpty(t, notes)
				assert.Contains(t, notes[0], tc.note)
			}
		})
	}
}
