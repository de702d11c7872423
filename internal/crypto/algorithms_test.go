package crypto

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// allAlgorithms lists every exported URI constant, so a constant missing
// from the table (or a typo in one) fails TestAlgorithmTable.
var allAlgorithms = []string{
	AlgDigestSHA1, AlgDigestSHA224, AlgDigestSHA256, AlgDigestSHA384, AlgDigestSHA512,
	AlgRSASHA1, AlgRSASHA224, AlgRSASHA256, AlgRSASHA384, AlgRSASHA512,
	AlgRSAPSSSHA256, AlgRSAPSSSHA384, AlgRSAPSSSHA512,
	AlgECDSASHA1, AlgECDSASHA224, AlgECDSASHA256, AlgECDSASHA384, AlgECDSASHA512,
	AlgEd25519,
	AlgHMACSHA1, AlgHMACSHA224, AlgHMACSHA256, AlgHMACSHA384, AlgHMACSHA512,
	AlgRSA15, AlgRSAOAEPMGF1P, AlgRSAOAEP,
	AlgMGF1SHA1, AlgMGF1SHA224, AlgMGF1SHA256, AlgMGF1SHA384, AlgMGF1SHA512,
	AlgKWAES128, AlgKWAES192, AlgKWAES256,
	AlgAES128CBC, AlgAES192CBC, AlgAES256CBC,
	AlgAES128GCM, AlgAES192GCM, AlgAES256GCM,
}

func TestAlgorithmTable(t *testing.T) {
	require.Len(t, algs, len(allAlgorithms), "every table entry has a constant and vice versa")
	labels := map[string]string{}
	for _, u := range allAlgorithms {
		a, ok := algs[u]
		require.True(t, ok, u)
		assert.True(t, strings.HasPrefix(u, "http://www.w3.org/"), u)
		assert.Regexp(t, `^[a-z0-9_-]+$`, a.label, u)
		prev, dup := labels[a.label]
		assert.False(t, dup, "label %q of %s already used by %s", a.label, u, prev)
		labels[a.label] = u
		assert.Equal(t, a.label, AlgorithmLabel(u))
	}
}

func TestAlgorithmLabel(t *testing.T) {
	tests := []struct{ name, uri, want string }{
		{"ok/rsa-sha256", AlgRSASHA256, "rsa-sha256"},
		{"ok/sha256", AlgDigestSHA256, "sha256"},
		{"ok/aes256-gcm", AlgAES256GCM, "aes256-gcm"},
		{"ok/mgf1p", AlgRSAOAEPMGF1P, "rsa-oaep-mgf1p"},
		{"ok/pss", AlgRSAPSSSHA384, "rsa-pss-sha384"},
		{"ok/ed25519", AlgEd25519, "ed25519"},
		{"fail/unknown-is-other", "http://www.w3.org/2001/04/xmldsig-more#md5", LabelOther},
		{"fail/attacker-text-is-other", `"}{evil="1`, LabelOther},
		{"fail/empty-is-other", "", LabelOther},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, AlgorithmLabel(tc.uri))
		})
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name string
		uri  string
		want AlgorithmClass
		ok   bool
	}{
		{"ok/signature-rsa", AlgRSASHA256, ClassSignature, true},
		{"ok/signature-hmac", AlgHMACSHA512, ClassSignature, true},
		{"ok/signature-eddsa", AlgEd25519, ClassSignature, true},
		{"ok/digest", AlgDigestSHA384, ClassDigest, true},
		{"ok/key-transport", AlgRSAOAEP, ClassKeyTransport, true},
		{"ok/key-wrap", AlgKWAES192, ClassKeyWrap, true},
		{"ok/block-cipher-gcm", AlgAES128GCM, ClassBlockCipher, true},
		{"ok/block-cipher-cbc", AlgAES256CBC, ClassBlockCipher, true},
		{"ok/mgf", AlgMGF1SHA256, ClassMGF, true},
		{"fail/dsa", "http://www.w3.org/2000/09/xmldsig#dsa-sha1", 0, false},
		{"fail/md5", "http://www.w3.org/2001/04/xmldsig-more#md5", 0, false},
		{"fail/3des", "http://www.w3.org/2001/04/xmlenc#tripledes-cbc", 0, false},
		{"fail/pss-with-params", "http://www.w3.org/2007/05/xmldsig-more#rsa-pss", 0, false},
		{"fail/case-differs", strings.ToUpper(AlgRSASHA256), 0, false},
		{"fail/trailing-space", AlgRSASHA256 + " ", 0, false},
		{"fail/empty", "", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, ok := Classify(tc.uri)
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.want, c)
		})
	}
	assert.Equal(t, "key-transport", ClassKeyTransport.String())
	assert.Equal(t, "AlgorithmClass(0)", AlgorithmClass(0).String())
}

// legacyAlgs are the algorithms refused for a known attack: SHA-1 digests and
// signatures (SHAttered; collisions make a signed SHA-1 digest forgeable),
// RSA-1.5 key transport (Bleichenbacher) and AES-CBC (no integrity: CBC
// oracle). The default set must hold none of them.
var legacyAlgs = []string{AlgDigestSHA1, AlgRSASHA1, AlgECDSASHA1, AlgHMACSHA1, AlgRSA15, AlgAES128CBC, AlgAES192CBC, AlgAES256CBC}

// defaultAllowList is NewAllowList(DefaultAllowed()...).
func defaultAllowList(t testing.TB) *AllowList {
	t.Helper()
	l, err := NewAllowList(DefaultAllowed()...)
	require.NoError(t, err)
	return l
}

func TestDefaultAllowed(t *testing.T) {
	d := DefaultAllowed()
	for _, u := range d {
		c, ok := Classify(u)
		require.True(t, ok, u)
		assert.NotEqual(t, ClassMGF, c, u)
		assert.NotContains(t, legacyAlgs, u)
	}
	for _, must := range []string{AlgRSASHA256, AlgRSAPSSSHA256, AlgECDSASHA256, AlgEd25519, AlgHMACSHA256,
		AlgDigestSHA256, AlgRSAOAEPMGF1P, AlgRSAOAEP, AlgAES128GCM, AlgAES256GCM} {
		assert.Contains(t, d, must)
	}
	// No key wrap: nothing unwraps it (issue 15).
	for _, not := range []string{AlgRSASHA224, AlgDigestSHA224, AlgAES192GCM, AlgKWAES128, AlgKWAES192, AlgKWAES256} {
		assert.NotContains(t, d, not)
	}
	d[0] = "changed"
	assert.Equal(t, AlgRSASHA256, DefaultAllowed()[0], "a fresh slice each call")
}

func TestAllowList(t *testing.T) {
	def := defaultAllowList(t)
	legacy, err := NewAllowList(AlgRSASHA1, AlgDigestSHA1, AlgAES128CBC)
	require.NoError(t, err)
	tests := []struct {
		name  string
		list  *AllowList
		class AlgorithmClass
		uri   string
		err   error
	}{
		{"ok/default-rsa-sha256", def, ClassSignature, AlgRSASHA256, nil},
		{"ok/default-gcm", def, ClassBlockCipher, AlgAES256GCM, nil},
		{"ok/default-oaep-mgf1p", def, ClassKeyTransport, AlgRSAOAEPMGF1P, nil},
		{"ok/legacy-list-rsa-sha1", legacy, ClassSignature, AlgRSASHA1, nil},
		{"fail/default-rsa-sha1", def, ClassSignature, AlgRSASHA1, ErrAlgorithmNotAllowed},
		{"fail/default-cbc", def, ClassBlockCipher, AlgAES128CBC, ErrAlgorithmNotAllowed},
		{"fail/default-rsa15", def, ClassKeyTransport, AlgRSA15, ErrAlgorithmNotAllowed},
		{"fail/digest-as-signature", def, ClassSignature, AlgDigestSHA256, ErrAlgorithmNotAllowed},
		{"fail/key-wrap-as-data-cipher", def, ClassBlockCipher, AlgKWAES256, ErrAlgorithmNotAllowed},
		{"fail/legacy-list-gcm", legacy, ClassBlockCipher, AlgAES128GCM, ErrAlgorithmNotAllowed},
		{"fail/unknown", def, ClassSignature, "http://www.w3.org/2000/09/xmldsig#dsa-sha1", ErrUnsupportedAlgorithm},
		{"fail/nil-list", nil, ClassSignature, AlgRSASHA256, ErrAlgorithmNotAllowed},
		{"fail/zero-list", &AllowList{}, ClassSignature, AlgRSASHA256, ErrAlgorithmNotAllowed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.list.Check(tc.class, tc.uri)
			if tc.err == nil {
				require.NoError(t, err)
				assert.True(t, tc.list.Allowed(tc.class, tc.uri))
				return
			}
			require.ErrorIs(t, err, tc.err)
			assert.False(t, tc.list.Allowed(tc.class, tc.uri))
		})
	}

	sorted := DefaultAllowed()
	slices.Sort(sorted)
	assert.Equal(t, sorted, def.URIs())
	assert.Nil(t, (*AllowList)(nil).URIs())

	for name, uris := range map[string][]string{
		"fail/unknown-uri": {AlgRSASHA256, "http://www.w3.org/2001/04/xmldsig-more#rsa-md5"},
		"fail/mgf-uri":     {AlgMGF1SHA256},
		"fail/typo":        {"http://www.w3.org/2001/04/xmldsig-more#rsa-sha265"},
	} {
		t.Run("new/"+name, func(t *testing.T) {
			_, err := NewAllowList(uris...)
			require.ErrorIs(t, err, ErrUnsupportedAlgorithm)
		})
	}
}

func TestCheckQuotesClippedURI(t *testing.T) {
	long := "http://evil.example/" + strings.Repeat("a", 10000) + "\n"
	err := defaultAllowList(t).Check(ClassSignature, long)
	require.ErrorIs(t, err, ErrUnsupportedAlgorithm)
	assert.Less(t, len(err.Error()), 300, "an attacker-chosen URI is clipped in messages")
	assert.NotContains(t, err.Error(), "\n", "and quoted")
}

func BenchmarkAllowListCheck(b *testing.B) {
	l := defaultAllowList(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := l.Check(ClassSignature, AlgRSASHA256); err != nil {
			b.Fatal(err)
		}
	}
}
