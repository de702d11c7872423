package crypto

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLegacy(t *testing.T) {
	for _, tc := range []struct {
		name   string
		uri    string
		legacy bool
	}{
		{"ok/sha1 digest is legacy", AlgDigestSHA1, true},
		{"ok/rsa-sha1 is legacy", AlgRSASHA1, true},
		{"ok/ecdsa-sha1 is legacy", AlgECDSASHA1, true},
		{"ok/hmac-sha1 is legacy", AlgHMACSHA1, true},
		{"ok/rsa-1_5 is legacy", AlgRSA15, true},
		{"ok/aes128-cbc is legacy", AlgAES128CBC, true},
		{"ok/aes256-cbc is legacy", AlgAES256CBC, true},
		{"fail/sha256 digest is current", AlgDigestSHA256, false},
		{"fail/rsa-sha256 is current", AlgRSASHA256, false},
		{"fail/rsa-oaep-mgf1p is current", AlgRSAOAEPMGF1P, false},
		{"fail/mgf1-sha1 is a parameter, not legacy", AlgMGF1SHA1, false},
		{"fail/aes256-gcm is current", AlgAES256GCM, false},
		{"fail/kw-aes128 is current", AlgKWAES128, false},
		{"fail/unknown uri", "http://example.com/alg", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.legacy, Legacy(tc.uri))
		})
	}
	assert.Equal(t, []string{"aes128-cbc", "aes192-cbc", "aes256-cbc", "ecdsa-sha1", "hmac-sha1", "rsa-1_5", "rsa-sha1", "sha1"}, LegacyLabels())
}
