package config

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/wssgw/wssgw/internal/testpki"
)

func TestValidateEgress(t *testing.T) {
	dir := t.TempDir()
	cert, key := writeKeyPair(t, dir) // ECDSA
	partner := testpki.NewCA(t, "partner CA").IssueRSA(t, dir, "partner")
	const k = "routes[0].egress"
	egress := func(r *Route) {
		r.Kind = KindEgress
		r.Egress.Sign.CertFile, r.Egress.Sign.KeyFile = cert, key
		r.Egress.Response.Policy = "partner"
	}
	tests := map[string]struct {
		mutate   func(r *Route)
		policy   func(p *Policy) // the response policy "partner"
		want     []string
		wantText string // a fragment of the first problem's message
	}{
		"ok/ingress-default":  {mutate: func(*Route) {}},
		"ok/egress":           {mutate: egress},
		"ok/egress-encrypted": {mutate: func(r *Route) { egress(r); r.Egress.Encrypt.PartnerCertFile = partner.CertFile }},
		"ok/egress-everything": {mutate: func(r *Route) {
			egress(r)
			r.Egress.Sign.KeyReference = KeyRefX509v3
			r.Egress.Sign.SignatureAlgorithm = "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha384"
			r.Egress.Sign.DigestAlgorithm = "http://www.w3.org/2001/04/xmldsig-more#sha384"
			r.Egress.Sign.Parts = []string{PartBody, PartTimestamp, "{http://www.w3.org/2005/08/addressing}To"}
			r.Egress.Encrypt.PartnerCertFile = partner.CertFile
			r.Egress.Encrypt.DataEncryption = "http://www.w3.org/2009/xmlenc11#aes128-gcm"
			r.Egress.Encrypt.KeyReference = KeyRefSKI
			r.Egress.Response.RequireSignatureConfirmation = true
			r.Egress.Response.UnsignedFaults = FaultsReject
		}},
		"fail/unknown-kind": {mutate: func(r *Route) { r.Kind = "outbound" }, want: []string{"routes[0].kind"}, wantText: `got "outbound"`},
		"fail/egress-keys-on-ingress": {mutate: func(r *Route) {
			r.Egress.Sign.CertFile, r.Egress.Response.Policy = cert, "partner"
		}, want: []string{k + ".sign.certFile", k + ".response.policy"}, wantText: "kind is \"ingress\""},
		"fail/egress-without-anything": {mutate: func(r *Route) { r.Kind = KindEgress },
			want: []string{k + ".sign.certFile", k + ".response.policy"}},
		"fail/egress-without-key": {mutate: func(r *Route) { egress(r); r.Egress.Sign.KeyFile = "" },
			want: []string{k + ".sign.keyFile"}},
		"fail/egress-key-mismatch": {mutate: func(r *Route) { egress(r); r.Egress.Sign.KeyFile = partner.KeyFile },
			want: []string{k + ".sign.certFile"}},
		"fail/egress-with-policy": {mutate: func(r *Route) { egress(r); r.Policy = "partner" },
			want: []string{"routes[0].policy"}, wantText: "egress.response.policy"},
		"fail/egress-skip-gate": {mutate: func(r *Route) { egress(r); r.UnsafeSkipGate = true },
			want: []string{"routes[0].unsafeSkipGate"}},
		"fail/sign-enums": {mutate: func(r *Route) {
			egress(r)
			r.Egress.Sign.KeyReference = "keyname"
			r.Egress.Sign.SignatureAlgorithm = "http://www.w3.org/2001/04/xmlenc#sha256" // a digest
			r.Egress.Sign.DigestAlgorithm = "urn:md5"
		}, want: []string{k + ".sign.keyReference", k + ".sign.signatureAlgorithm", k + ".sign.digestAlgorithm"}},
		"fail/parts": {mutate: func(r *Route) { egress(r); r.Egress.Sign.Parts = []string{PartTimestamp, "To"} },
			want: []string{k + ".sign.parts[1]", k + ".sign.parts"}, wantText: `got "To"`},
		"fail/timestamp-ttl": {mutate: func(r *Route) { egress(r); r.Egress.Sign.TimestampTTL = 0 },
			want: []string{k + ".sign.timestampTTL"}},
		"fail/encrypt-enums": {mutate: func(r *Route) {
			egress(r)
			r.Egress.Encrypt.KeyTransport = "http://www.w3.org/2001/04/xmlenc#rsa-1_5"
			r.Egress.Encrypt.DataEncryption = "http://www.w3.org/2001/04/xmlenc#aes256-cbc"
			r.Egress.Encrypt.KeyReference = "name"
		}, want: []string{k + ".encrypt.keyTransport", k + ".encrypt.dataEncryption", k + ".encrypt.keyReference"}},
		"fail/partner-not-rsa": {mutate: func(r *Route) { egress(r); r.Egress.Encrypt.PartnerCertFile = cert },
			want: []string{k + ".encrypt.partnerCertFile"}, wantText: "RSA"},
		"fail/partner-missing": {mutate: func(r *Route) { egress(r); r.Egress.Encrypt.PartnerCertFile = filepath.Join(dir, "none.pem") },
			want: []string{k + ".encrypt.partnerCertFile"}},
		"fail/unknown-response-policy": {mutate: func(r *Route) { egress(r); r.Egress.Response.Policy = "partner-c" },
			want: []string{k + ".response.policy"}, wantText: `"partner-c"`},
		"fail/response-policy-signs": {mutate: egress, policy: func(p *Policy) {
			p.Responses.Sign, p.Responses.CertFile, p.Responses.KeyFile = true, cert, key
		}, want: []string{k + ".response.policy"}},
		"fail/confirmation-without-signature": {mutate: func(r *Route) {
			egress(r)
			r.Egress.Response.RequireSignatureConfirmation = true
		}, policy: func(p *Policy) { p.Require = []string{RequireTimestamp} },
			want: []string{k + ".response.requireSignatureConfirmation"}},
		"fail/response-enums": {mutate: func(r *Route) {
			egress(r)
			r.Egress.Response.UnsignedFaults, r.Egress.Response.MaxBodyBytes = "drop", 0
		}, want: []string{k + ".response.unsignedFaults", k + ".response.maxBodyBytes"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := valid()
			p := DefaultPolicy()
			p.Trust.CAFiles = []string{cert}
			if tc.policy != nil {
				tc.policy(&p)
			}
			c.Policies = map[string]Policy{"partner": p}
			tc.mutate(&c.Routes[0])
			assert.ElementsMatch(t, tc.want, problemKeys(t, c))
			if tc.wantText != "" {
				assert.Contains(t, c.Validate().Error(), tc.wantText)
			}
		})
	}
}
