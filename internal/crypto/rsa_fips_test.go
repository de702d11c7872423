package crypto

import (
	"crypto"
	"crypto/fips140"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cachedVerifier reports whether the fast path holds pub.
func cachedVerifier(pub *rsa.PublicKey) bool {
	rsaVerifiers.RLock()
	defer rsaVerifiers.RUnlock()
	return rsaVerifiers.m[pub] != nil
}

// TestRSAVerifyFIPSSwitch: in FIPS mode no key enters the bigmod cache and
// a cached key is not used; results are crypto/rsa's either way.
func TestRSAVerifyFIPSSwitch(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048) // a key of its own: the cache is global
	require.NoError(t, err)
	pub := &key.PublicKey
	h := sha256.Sum256([]byte("<ds:SignedInfo/>"))
	good, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, h[:])
	require.NoError(t, err)
	bad := append([]byte(nil), good...)
	bad[10] ^= 1
	defer func(f func() bool) { fipsEnabled = f }(fipsEnabled)

	fipsEnabled = func() bool { return true }
	require.NoError(t, verifyPKCS1v15(pub, crypto.SHA256, h[:], good))
	require.ErrorIs(t, verifyPKCS1v15(pub, crypto.SHA256, h[:], bad), rsa.ErrVerification)
	assert.False(t, cachedVerifier(pub), "fips: nothing cached")

	fipsEnabled = func() bool { return false }
	require.NoError(t, verifyPKCS1v15(pub, crypto.SHA256, h[:], good))
	assert.True(t, cachedVerifier(pub), "off: cached after a good signature")
	require.ErrorIs(t, verifyPKCS1v15(pub, crypto.SHA256, h[:], bad), errBadSignature, "off: the fast path's error")

	fipsEnabled = func() bool { return true }
	require.ErrorIs(t, verifyPKCS1v15(pub, crypto.SHA256, h[:], bad), rsa.ErrVerification, "fips: crypto/rsa even for a cached key")
	require.NoError(t, verifyPKCS1v15(pub, crypto.SHA256, h[:], good))
}

// TestRSAVerifyFIPSMode runs the switch for real: the test binary again
// under GODEBUG=fips140=on, where fips140.Enabled() is true and a verified
// key must stay out of the cache.
func TestRSAVerifyFIPSMode(t *testing.T) {
	if os.Getenv("WSSGW_FIPS_CHILD") == "1" {
		require.True(t, fips140.Enabled(), "GODEBUG=fips140=on")
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		require.NoError(t, err)
		h := sha256.Sum256([]byte("fips"))
		sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, h[:])
		require.NoError(t, err)
		require.NoError(t, verifyPKCS1v15(&key.PublicKey, crypto.SHA256, h[:], sig))
		require.False(t, cachedVerifier(&key.PublicKey), "FIPS mode uses crypto/rsa only")
		return
	}
	if testing.Short() {
		t.Skip("starts a subprocess")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRSAVerifyFIPSMode$", "-test.count=1")
	cmd.Env = append(os.Environ(), "GODEBUG=fips140=on", "WSSGW_FIPS_CHILD=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "PASS")
	assert.False(t, fips140.Enabled(), "the parent runs without FIPS mode")
}
