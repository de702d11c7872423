package trust

import (
	"crypto/rand"
	"crypto/sha1"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"math/big"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/testpki"
)

// certKeysCert issues a certificate of serial 4096 under an issuer named
// CN=Issuing CA 1+OU=Ops,O=Acme\, Inc.,C=DE (a multi-valued RDN), with
// the given SubjectKeyIdentifier extension (nil: none).
func certKeysCert(t testing.TB, ski []byte) *x509.Certificate {
	t.Helper()
	caKey := testpki.ECKey(t)
	raw, err := asn1.Marshal(pkix.RDNSequence{
		{{Type: asn1.ObjectIdentifier{2, 5, 4, 6}, Value: "DE"}},
		{{Type: asn1.ObjectIdentifier{2, 5, 4, 10}, Value: "Acme, Inc."}},
		{{Type: asn1.ObjectIdentifier{2, 5, 4, 3}, Value: "Issuing CA 1"}, {Type: asn1.ObjectIdentifier{2, 5, 4, 11}, Value: "Ops"}},
	})
	require.NoError(t, err)
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), RawSubject: raw, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, ca, ca, caKey.Public(), caKey)
	require.NoError(t, err)
	ca, err = x509.ParseCertificate(der)
	require.NoError(t, err)
	key := testpki.ECKey(t)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(4096), Subject: pkix.Name{CommonName: "leaf"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), SubjectKeyId: ski}
	der, err = x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
	require.NoError(t, err)
	c, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return c
}

// TestCertKeys: the kept values answer as DN.Equal, ComputeSKI, the SKI
// extension and the DER's SHA-1 do.
func TestCertKeys(t *testing.T) {
	c := certKeysCert(t, []byte("extension SKI"))
	k := NewCertKeys(c)
	assert.Same(t, c, k.Certificate())
	for _, tc := range []struct {
		name, dn string
		serial   int64
		want     bool
	}{
		{"ok/exact", `CN=Issuing CA 1+OU=Ops,O=Acme\, Inc.,C=DE`, 4096, true},
		{"ok/avas-reordered-spaced-cased", ` ou = ops + cn = issuing  ca 1 ; o="ACME, INC." ; c=de`, 4096, true},
		{"fail/rdn-split", `CN=Issuing CA 1,OU=Ops,O=Acme\, Inc.,C=DE`, 4096, false},
		{"fail/rdn-order", `C=DE,O=Acme\, Inc.,CN=Issuing CA 1+OU=Ops`, 4096, false},
		{"fail/serial", `CN=Issuing CA 1+OU=Ops,O=Acme\, Inc.,C=DE`, 4097, false},
	} {
		t.Run("issuer-serial/"+tc.name, func(t *testing.T) {
			name, err := ParseIssuerName(tc.dn)
			require.NoError(t, err)
			want, err := ParseDN(tc.dn)
			require.NoError(t, err)
			got, err := DNFromRaw(c.RawIssuer)
			require.NoError(t, err)
			require.Equal(t, tc.want, want.Equal(got) && tc.serial == 4096, "the case is wrong")
			for range 2 { // computed, then kept
				assert.Equal(t, tc.want, k.HasIssuerSerial(name, big.NewInt(tc.serial)))
			}
		})
	}
	t.Run("fail/issuer-name-does-not-parse", func(t *testing.T) {
		_, err := ParseIssuerName(`CN=a,,O=b`)
		require.ErrorIs(t, err, ErrBadDN)
		assert.False(t, k.HasIssuerSerial(IssuerName{}, big.NewInt(4096)))
		assert.False(t, k.HasIssuerSerial(IssuerName{}, nil))
	})
	computed, err := ComputeSKI(c)
	require.NoError(t, err)
	sum := sha1.Sum(c.Raw)
	for _, tc := range []struct {
		name string
		ski  []byte
		want bool
	}{{"ok/extension", []byte("extension SKI"), true}, {"ok/computed", computed, true}, {"fail/empty", []byte{}, false}, {"fail/nil", nil, false}, {"fail/other", sum[:], false}} {
		t.Run("ski/"+tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, k.HasSKI(tc.ski))
		})
	}
	assert.False(t, NewCertKeys(certKeysCert(t, nil)).HasSKI([]byte{}), "fail/empty-without-extension")
	assert.True(t, k.HasThumbprintSHA1(sum[:]), "ok/thumbprint")
	assert.False(t, k.HasThumbprintSHA1(sum[:19]), "fail/thumbprint-short")
	assert.False(t, k.HasThumbprintSHA1(nil), "fail/thumbprint-nil")
}

// FuzzIssuerName: a parsed IssuerName names the certificate exactly when
// DN.Equal says its issuer equals the parsed DN.
func FuzzIssuerName(f *testing.F) {
	for _, s := range []string{`CN=Issuing CA 1+OU=Ops,O=Acme\, Inc.,C=DE`, `ou=ops+cn=issuing ca 1,o="acme, inc.",c=de`, `CN=Issuing CA 1,OU=Ops,O=Acme\, Inc.,C=DE`, "", `CN=a,,O=b`} {
		f.Add(s)
	}
	c := certKeysCert(f, nil)
	k := NewCertKeys(c)
	issuer, err := DNFromRaw(c.RawIssuer)
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, s string) {
		dn, err := ParseDN(s)
		name, err2 := ParseIssuerName(s)
		if (err == nil) != (err2 == nil) {
			t.Fatalf("%q: ParseDN %v, ParseIssuerName %v", s, err, err2)
		}
		if err != nil {
			return
		}
		if got, want := k.HasIssuerSerial(name, big.NewInt(4096)), dn.Equal(issuer); got != want {
			t.Fatalf("%q: kept %v, DN.Equal %v", s, got, want)
		}
	})
}
