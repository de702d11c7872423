package trust

import (
	"crypto/sha1"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/testpki"
)

func TestIndex(t *testing.T) {
	dir := t.TempDir()
	ca := testpki.NewIssuer(t, "Test CA", nil, withSubject(pkix.Name{CommonName: "Test CA", Organization: []string{"Acme, Inc."}, Country: []string{"DE"}}))
	noSKI, _ := ca.Issue(t, "no-ski", nil)
	withExt, _ := ca.Issue(t, "with-ski", nil, withSKI([]byte{0xde, 0xad, 0xbe, 0xef}))
	pinned, _ := testpki.SelfSigned(t, "pinned")
	require.Empty(t, noSKI.SubjectKeyId)
	require.NotEmpty(t, ca.Cert.SubjectKeyId, "Go generates the SKI of CA certificates")

	s, err := NewStore(Options{
		CAFiles:         []string{testpki.WriteFile(t, dir, "ca.crt", testpki.CertsPEM(ca.Cert))},
		PinnedCertFiles: []string{testpki.WriteFile(t, dir, "pin.crt", testpki.CertsPEM(pinned))},
		KnownCertFiles:  []string{testpki.WriteFile(t, dir, "known.crt", testpki.CertsPEM(noSKI, withExt, ca.Cert))},
	})
	require.NoError(t, err)
	ix := s.Index()
	assert.Equal(t, 4, ix.Len())

	computed, err := ComputeSKI(noSKI)
	require.NoError(t, err)
	// (Go 1.25+ fills a CA's SKI with truncated SHA-256, RFC 7093; openssl
	// and WSS4J use RFC 3280 SHA-1: TestWSS4JVectorKeys checks ComputeSKI
	// against openssl-made certificates.)
	withExtComputed, err := ComputeSKI(withExt)
	require.NoError(t, err)

	serial := noSKI.SerialNumber
	issuerSerial := []struct {
		name, issuer string
		serial       *big.Int
		want         *x509.Certificate
		err          error
	}{
		{"ok/rfc2253", `CN=Test CA,O=Acme\, Inc.,C=DE`, serial, noSKI, nil},
		{"ok/quoted-legacy-style", `CN="Test CA", O="Acme, Inc.", C=DE`, serial, noSKI, nil},
		{"ok/hex-escaped-comma-lowercase", `cn=test ca,o=acme\2c inc.,c=de`, serial, noSKI, nil},
		{"ok/oid-types", `2.5.4.3=Test CA,2.5.4.10=Acme\, Inc.,2.5.4.6=DE`, serial, noSKI, nil},
		{"ok/pinned-self-signed", "CN=pinned,O=Org", pinned.SerialNumber, pinned, nil},
		{"fail/wrong-serial", `CN=Test CA,O=Acme\, Inc.,C=DE`, big.NewInt(999999), nil, ErrNotFound},
		{"fail/unescaped-comma-is-another-dn", `CN=Test CA,O=Acme, Inc.,C=DE`, serial, nil, ErrBadDN},
		{"fail/reversed-order", `C=DE,O=Acme\, Inc.,CN=Test CA`, serial, nil, ErrNotFound},
		{"fail/other-issuer", `CN=Other CA,O=Acme\, Inc.,C=DE`, serial, nil, ErrNotFound},
		{"fail/nil-serial", `CN=Test CA,O=Acme\, Inc.,C=DE`, nil, nil, ErrNotFound},
	}
	for _, tc := range issuerSerial {
		t.Run("issuerserial/"+tc.name, func(t *testing.T) {
			c, err := ix.ByIssuerSerial(tc.issuer, tc.serial)
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.True(t, c.Equal(tc.want))
		})
	}

	ski := []struct {
		name string
		ski  []byte
		want *x509.Certificate
	}{
		{"ok/extension-value", []byte{0xde, 0xad, 0xbe, 0xef}, withExt},
		{"ok/computed-without-extension", computed, noSKI},
		{"ok/computed-when-extension-differs", withExtComputed, withExt},
		{"ok/ca-extension", ca.Cert.SubjectKeyId, ca.Cert},
		{"fail/unknown", []byte{1, 2, 3}, nil},
	}
	for _, tc := range ski {
		t.Run("ski/"+tc.name, func(t *testing.T) {
			c, err := ix.BySKI(tc.ski)
			if tc.want == nil {
				require.ErrorIs(t, err, ErrNotFound)
				return
			}
			require.NoError(t, err)
			assert.True(t, c.Equal(tc.want))
		})
	}

	t.Run("thumbprint/ok", func(t *testing.T) {
		tp := sha1.Sum(withExt.Raw)
		c, err := ix.ByThumbprintSHA1(tp[:])
		require.NoError(t, err)
		assert.True(t, c.Equal(withExt))
	})
	t.Run("thumbprint/fail/unknown-and-short", func(t *testing.T) {
		other, _ := testpki.SelfSigned(t, "other")
		tp := sha1.Sum(other.Raw)
		_, err := ix.ByThumbprintSHA1(tp[:])
		require.ErrorIs(t, err, ErrNotFound)
		_, err = ix.ByThumbprintSHA1(tp[:5])
		require.ErrorIs(t, err, ErrNotFound)
	})
	t.Run("found-is-not-trusted", func(t *testing.T) {
		// The index holds the CA-issued leaf; it verifies. A known but
		// foreign certificate would be found and then rejected by Verify.
		_, err := s.Verify(noSKI, nil, testpki.T0, PurposeSigning)
		require.NoError(t, err)
	})
}
