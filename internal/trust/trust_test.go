package trust

import (
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	wcrypto "github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/testpki"
)

type trustFixture struct {
	dir                    string
	root, inter, foreign   *testpki.Issuer
	rootFile, interFile    string
	leaf, viaInter, revoke *x509.Certificate
}

func newTrustFixture(t *testing.T) *trustFixture {
	f := &trustFixture{dir: t.TempDir()}
	f.root = testpki.NewIssuer(t, "Root", nil)
	f.inter = testpki.NewIssuer(t, "Inter", f.root)
	f.foreign = testpki.NewIssuer(t, "Foreign", nil)
	f.rootFile = testpki.WriteFile(t, f.dir, "root.crt", testpki.CertsPEM(f.root.Cert))
	f.interFile = testpki.WriteFile(t, f.dir, "inter.crt", testpki.CertsPEM(f.inter.Cert))
	f.leaf, _ = f.root.Issue(t, "leaf", nil)
	f.viaInter, _ = f.inter.Issue(t, "deep", nil)
	f.revoke, _ = f.root.Issue(t, "revoked", nil)
	return f
}

func (f *trustFixture) opts(mod ...func(*Options)) Options {
	o := Options{CAFiles: []string{f.rootFile}}
	for _, m := range mod {
		m(&o)
	}
	return o
}

func TestTrustStoreVerify(t *testing.T) {
	f := newTrustFixture(t)
	w := func(name string, data []byte) string { return testpki.WriteFile(t, f.dir, name, data) }
	rootCRL := w("root.crl", f.root.CRL(t, testpki.T0.Add(time.Hour), f.revoke.SerialNumber))
	foreignCRL := w("foreign.crl", f.foreign.CRL(t, testpki.T0.Add(time.Hour)))

	selfSigned1, _ := testpki.SelfSigned(t, "attacker")
	pinned, _ := testpki.SelfSigned(t, "pinned")
	pinnedFile := w("pinned.crt", testpki.CertsPEM(pinned))
	spkiPin := sha256.Sum256(pinned.RawSubjectPublicKeyInfo)
	certPin := sha256.Sum256(pinned.Raw)
	foreignLeaf, _ := f.foreign.Issue(t, "foreign-leaf", nil)
	encOnly, _ := f.root.Issue(t, "enc", nil, withKeyUsage(x509.KeyUsageKeyEncipherment))
	noKU, _ := f.root.Issue(t, "noku", nil, withKeyUsage(0))
	serverEKU, _ := f.root.Issue(t, "server", nil, withEKU(x509.ExtKeyUsageServerAuth))
	weak, _ := f.root.Issue(t, "weak", testpki.RSAKey(t, 1024))
	rsaLeaf, _ := f.root.Issue(t, "rsa", testpki.RSAKey(t, 2048), withKeyUsage(x509.KeyUsageDigitalSignature|x509.KeyUsageKeyEncipherment))
	partner, _ := f.root.Issue(t, "partner", nil, withSubject(pkix.Name{CommonName: "partner", Organization: []string{"Acme"}}))
	// An attacker CA that issues a leaf and is offered as an intermediate.
	evilCA := testpki.NewIssuer(t, "Root", nil)
	evilLeaf, _ := evilCA.Issue(t, "leaf", nil)

	type tc struct {
		name   string
		opts   Options
		leaf   *x509.Certificate
		inter  []*x509.Certificate
		at     time.Time
		p      Purpose
		err    error
		pinned bool
	}
	pin := func(o *Options) { o.PinnedCertFiles = []string{pinnedFile} }
	tests := []tc{
		{name: "ok/leaf-of-root", opts: f.opts(), leaf: f.leaf},
		{name: "ok/leaf-via-message-intermediate", opts: f.opts(), leaf: f.viaInter, inter: []*x509.Certificate{f.inter.Cert}},
		{name: "ok/leaf-via-configured-intermediate", opts: f.opts(func(o *Options) { o.IntermediateFiles = []string{f.interFile} }), leaf: f.viaInter},
		{name: "ok/no-keyusage-extension", opts: f.opts(), leaf: noKU},
		{name: "ok/encryption-keyencipherment", opts: f.opts(), leaf: encOnly, p: PurposeEncryption},
		{name: "ok/rsa-2048-both-purposes", opts: f.opts(), leaf: rsaLeaf, p: PurposeEncryption},
		{name: "ok/not-revoked-with-crl", opts: f.opts(func(o *Options) { o.CRLFiles = []string{rootCRL} }), leaf: f.leaf},
		{name: "ok/subject-pattern", opts: f.opts(func(o *Options) { o.SubjectPattern = `^CN=partner,O=Acme$` }), leaf: partner},
		{name: "ok/san-pattern", opts: f.opts(func(o *Options) { o.SANPatterns = []string{`^nomatch$`, `^leaf\.example$`} }), leaf: f.leaf},
		{name: "ok/eku-any-by-default", opts: f.opts(), leaf: serverEKU},
		{name: "ok/pinned-cert-without-chain", opts: f.opts(pin), leaf: pinned, pinned: true},
		{name: "ok/pinned-only-no-ca", opts: Options{PinnedCertFiles: []string{pinnedFile}}, leaf: pinned, pinned: true},
		{name: "ok/pinned-by-spki-sha256", opts: Options{PinnedSHA256: []string{hex.EncodeToString(spkiPin[:])}}, leaf: pinned, pinned: true},
		{name: "ok/pinned-by-cert-sha256-colons", opts: Options{PinnedSHA256: []string{colonHex(certPin[:])}}, leaf: pinned, pinned: true},
		{name: "ok/pinned-expired-validity-skipped", opts: Options{PinnedCertFiles: []string{pinnedFile}, SkipPinnedValidity: true}, leaf: pinned, at: testpki.T0.Add(365 * 24 * time.Hour), pinned: true},
		{name: "fail/self-signed-leaf-not-in-store", opts: f.opts(), leaf: selfSigned1, err: ErrUntrusted},
		{name: "fail/self-signed-offered-as-own-intermediate", opts: f.opts(), leaf: selfSigned1, inter: []*x509.Certificate{selfSigned1}, err: ErrUntrusted},
		{name: "fail/leaf-of-another-ca", opts: f.opts(), leaf: foreignLeaf, err: ErrUntrusted},
		{name: "fail/leaf-of-another-ca-with-its-ca-as-intermediate", opts: f.opts(), leaf: foreignLeaf, inter: []*x509.Certificate{f.foreign.Cert}, err: ErrUntrusted},
		{name: "fail/attacker-ca-with-same-name", opts: f.opts(), leaf: evilLeaf, inter: []*x509.Certificate{evilCA.Cert}, err: ErrUntrusted},
		{name: "fail/missing-intermediate", opts: f.opts(), leaf: f.viaInter, err: ErrUntrusted},
		{name: "fail/no-trust-configured", opts: Options{}, leaf: f.leaf, err: ErrUntrusted},
		{name: "fail/expired-at-message-time", opts: f.opts(), leaf: f.leaf, at: testpki.T0.Add(31 * 24 * time.Hour), err: ErrExpired},
		{name: "fail/not-yet-valid-at-message-time", opts: f.opts(), leaf: f.leaf, at: testpki.T0.Add(-2 * time.Hour), err: ErrNotYetValid},
		{name: "fail/pinned-expired", opts: f.opts(pin), leaf: pinned, at: testpki.T0.Add(365 * 24 * time.Hour), err: ErrExpired},
		{name: "fail/pinned-not-yet-valid", opts: f.opts(pin), leaf: pinned, at: testpki.T0.Add(-2 * time.Hour), err: ErrNotYetValid},
		{name: "fail/signing-with-keyencipherment-only", opts: f.opts(), leaf: encOnly, err: ErrKeyUsage},
		{name: "fail/encryption-with-digitalsignature-only", opts: f.opts(), leaf: f.leaf, p: PurposeEncryption, err: ErrKeyUsage},
		{name: "fail/eku-required-client-auth", opts: f.opts(func(o *Options) { o.ExtKeyUsages = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth} }), leaf: serverEKU, err: ErrKeyUsage},
		{name: "fail/revoked-by-crl", opts: f.opts(func(o *Options) { o.CRLFiles = []string{rootCRL} }), leaf: f.revoke, err: ErrRevoked},
		{name: "fail/crl-stale-at-message-time", opts: f.opts(func(o *Options) { o.CRLFiles = []string{rootCRL} }), leaf: f.leaf, at: testpki.T0.Add(2 * time.Hour), err: ErrCRL},
		{name: "ok/crl-stale-allowed", opts: f.opts(func(o *Options) { o.CRLFiles = []string{rootCRL}; o.AllowExpiredCRL = true }), leaf: f.leaf, at: testpki.T0.Add(2 * time.Hour)},
		{name: "fail/revoked-even-if-crl-stale-allowed", opts: f.opts(func(o *Options) { o.CRLFiles = []string{rootCRL}; o.AllowExpiredCRL = true }), leaf: f.revoke, at: testpki.T0.Add(2 * time.Hour), err: ErrRevoked},
		{name: "fail/subject-pattern-mismatch", opts: f.opts(func(o *Options) { o.SubjectPattern = `^CN=partner,O=Acme$` }), leaf: f.leaf, err: ErrSubject},
		{name: "fail/subject-pattern-applies-to-pins", opts: Options{PinnedCertFiles: []string{pinnedFile}, SubjectPattern: `^CN=partner,`}, leaf: pinned, err: ErrSubject},
		{name: "fail/san-pattern-mismatch", opts: f.opts(func(o *Options) { o.SANPatterns = []string{`^partner\.example$`} }), leaf: f.leaf, err: ErrSubject},
		{name: "fail/rsa-1024-leaf", opts: f.opts(), leaf: weak, err: wcrypto.ErrKeyTooWeak},
		{name: "fail/unknown-purpose", opts: f.opts(), leaf: noKU, p: Purpose(9), err: ErrKeyUsage},
		{name: "fail/nil-leaf", opts: f.opts(), leaf: nil, err: ErrUntrusted},
	}
	_ = foreignCRL
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewStore(tc.opts)
			require.NoError(t, err)
			if tc.at.IsZero() {
				tc.at = testpki.T0
			}
			if tc.p == 0 {
				tc.p = PurposeSigning
			}
			for range 2 { // the second answer may come from the cache
				id, err := s.Verify(tc.leaf, tc.inter, tc.at, tc.p)
				if tc.err != nil {
					require.ErrorIs(t, err, tc.err)
					assert.Nil(t, id)
					assert.Regexp(t, `^crypto: `, err.Error())
					assert.Equal(t, Reason(tc.err), Reason(err))
					continue
				}
				require.NoError(t, err)
				assert.Equal(t, tc.pinned, id.Pinned)
				assert.True(t, id.Certificate.Equal(tc.leaf))
			}
		})
	}
}

func colonHex(b []byte) string {
	s := ""
	for i, c := range b {
		if i > 0 {
			s += ":"
		}
		s += hex.EncodeToString([]byte{c})
	}
	return s
}

func TestTrustStoreLoadErrors(t *testing.T) {
	f := newTrustFixture(t)
	w := func(name string, data []byte) string { return testpki.WriteFile(t, f.dir, name, data) }
	tests := []struct {
		name string
		opts Options
		err  error
	}{
		{"fail/crl-from-foreign-ca", f.opts(func(o *Options) { o.CRLFiles = []string{w("f.crl", f.foreign.CRL(t, testpki.T0.Add(time.Hour)))} }), ErrCRL},
		{"fail/crl-expired-at-load", f.opts(func(o *Options) { o.CRLFiles = []string{w("old.crl", f.root.CRL(t, testpki.T0.Add(-time.Minute)))} }), ErrCRL},
		{"fail/crl-garbage", f.opts(func(o *Options) {
			o.CRLFiles = []string{w("g.crl", []byte("-----BEGIN X509 CRL-----\nAAAA\n-----END X509 CRL-----\n"))}
		}), ErrCRL},
		{"fail/bad-pin", Options{PinnedSHA256: []string{"abcd"}}, wcrypto.ErrLoad},
		{"fail/bad-subject-regexp", f.opts(func(o *Options) { o.SubjectPattern = "(" }), wcrypto.ErrLoad},
		{"fail/bad-san-regexp", f.opts(func(o *Options) { o.SANPatterns = []string{"("} }), wcrypto.ErrLoad},
		{"fail/missing-ca-file", Options{CAFiles: []string{f.dir + "/nope"}}, wcrypto.ErrLoad},
		{"ok/crl-expired-at-load-allowed", f.opts(func(o *Options) {
			o.CRLFiles = []string{w("old2.crl", f.root.CRL(t, testpki.T0.Add(-time.Minute)))}
			o.AllowExpiredCRL = true
		}), nil},
		{"ok/crl-of-configured-intermediate", f.opts(func(o *Options) {
			o.IntermediateFiles = []string{f.interFile}
			o.CRLFiles = []string{w("i.crl", f.inter.CRL(t, testpki.T0.Add(time.Hour)))}
		}), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewStore(tc.opts)
			if tc.err == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tc.err)
		})
	}
}

func TestVerifyIdentity(t *testing.T) {
	f := newTrustFixture(t)
	s, err := NewStore(f.opts())
	require.NoError(t, err)
	id, err := s.Verify(f.leaf, nil, testpki.T0, PurposeSigning)
	require.NoError(t, err)
	s256 := sha256.Sum256(f.leaf.Raw)
	assert.Equal(t, "CN=leaf,O=Org", id.Subject)
	assert.Equal(t, "CN=Root,O=Org", id.Issuer)
	assert.Equal(t, hex.EncodeToString(s256[:]), id.SHA256)
	assert.Len(t, id.SHA1, 40)
	assert.Equal(t, f.leaf.SerialNumber.String(), id.SerialNumber)
	assert.Equal(t, f.leaf.NotAfter, id.NotAfter)
	assert.False(t, id.Pinned)
}

func TestVerifyCache(t *testing.T) {
	f := newTrustFixture(t)
	now := testpki.T0
	s, err := NewStore(f.opts(func(o *Options) {
		o.CacheSize = 4
		o.CacheTTL = time.Minute
		o.Clock = func() time.Time { return now }
	}))
	require.NoError(t, err)

	t.Run("ok/positive-hit-returns-same-identity", func(t *testing.T) {
		a, err := s.Verify(f.leaf, nil, testpki.T0, PurposeSigning)
		require.NoError(t, err)
		b, err := s.Verify(f.leaf, nil, testpki.T0.Add(time.Hour), PurposeSigning)
		require.NoError(t, err)
		assert.Same(t, a, b)
	})
	t.Run("fail/positive-entry-not-used-outside-validity", func(t *testing.T) {
		_, err := s.Verify(f.leaf, nil, testpki.T0.Add(31*24*time.Hour), PurposeSigning)
		require.ErrorIs(t, err, ErrExpired)
	})
	t.Run("fail/positive-entry-is-per-purpose", func(t *testing.T) {
		_, err := s.Verify(f.leaf, nil, testpki.T0, PurposeEncryption)
		require.ErrorIs(t, err, ErrKeyUsage)
	})
	t.Run("ok/negative-entry-depends-on-intermediates", func(t *testing.T) {
		_, err := s.Verify(f.viaInter, nil, testpki.T0, PurposeSigning)
		require.ErrorIs(t, err, ErrUntrusted)
		_, err = s.Verify(f.viaInter, []*x509.Certificate{f.inter.Cert}, testpki.T0, PurposeSigning)
		require.NoError(t, err)
	})
	t.Run("ok/bounded-and-ttl", func(t *testing.T) {
		for i := range 10 {
			c, _ := f.root.Issue(t, "many", nil, withSKI([]byte{byte(i)}))
			_, err := s.Verify(c, nil, testpki.T0, PurposeSigning)
			require.NoError(t, err)
			assert.LessOrEqual(t, s.cache.size(), 4)
		}
		a, err := s.Verify(f.leaf, nil, testpki.T0, PurposeSigning)
		require.NoError(t, err)
		now = now.Add(2 * time.Minute) // TTL over: a fresh decision
		b, err := s.Verify(f.leaf, nil, testpki.T0, PurposeSigning)
		require.NoError(t, err)
		assert.NotSame(t, a, b)
	})
}

// size is the number of cached decisions.
func (c *verifyCache) size() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.lenLocked()
}
