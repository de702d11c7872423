package trust

import (
	"crypto/x509/pkix"
	"encoding/asn1"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseDN(t *testing.T) {
	cn := asn1.ObjectIdentifier{2, 5, 4, 3}
	o := asn1.ObjectIdentifier{2, 5, 4, 10}
	email := asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 1}
	tests := []struct {
		name, in string
		want     DN
		format   string
	}{
		{"ok/rfc2253", "CN=a,O=b", DN{{{Type: cn, Value: "a"}}, {{Type: o, Value: "b"}}}, "CN=a,O=b"},
		{"ok/spaces-and-semicolon", " cn = a ; o=b ", DN{{{Type: cn, Value: "a"}}, {{Type: o, Value: "b"}}}, "CN=a,O=b"},
		{"ok/quoted-comma", `CN="a, b",O=c`, DN{{{Type: cn, Value: "a, b"}}, {{Type: o, Value: "c"}}}, `CN=a\, b,O=c`},
		{"ok/escaped-comma", `CN=a\, b`, DN{{{Type: cn, Value: "a, b"}}}, `CN=a\, b`},
		{"ok/hex-escape-utf8", `CN=J\C3\BCrgen`, DN{{{Type: cn, Value: "Jürgen"}}}, "CN=Jürgen"},
		{"ok/escaped-edges", `CN=\ a\ ,O=\#b`, DN{{{Type: cn, Value: " a "}}, {{Type: o, Value: "#b"}}}, `CN=\ a\ ,O=\#b`},
		{"ok/multivalued", "CN=a+O=b", DN{{{Type: cn, Value: "a"}, {Type: o, Value: "b"}}}, "CN=a+O=b"},
		{"ok/oid-type-and-ber-string", "1.2.840.113549.1.9.1=#16056140622E63", DN{{{Type: email, Value: "a@b.c"}}}, "EMAILADDRESS=a@b.c"},
		{"ok/oid-prefix", "OID.2.5.4.3=x", DN{{{Type: cn, Value: "x"}}}, "CN=x"},
		{"ok/ber-non-string", "CN=#020101", DN{{{Type: cn, Value: "020101", Raw: true}}}, "CN=#020101"},
		{"ok/empty", "", nil, ""},
		{"ok/email", "E=a@b.c", DN{{{Type: email, Value: "a@b.c"}}}, "EMAILADDRESS=a@b.c"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dn, err := ParseDN(tc.in)
			require.NoError(t, err)
			if tc.want != nil {
				assert.Equal(t, tc.want, dn)
				assert.Equal(t, tc.format, dn.String())
			}
		})
	}
	for _, in := range []string{"CN", "CN=a,", "=a", "FOO=a", "CN=a\\", `CN=\zz`, `CN="a`, `CN="a"b`, "CN=#0", "CN=#zz", "1=a", "1.02=a", "CN=a,,O=b"} {
		t.Run("fail/"+in, func(t *testing.T) {
			_, err := ParseDN(in)
			require.ErrorIs(t, err, ErrBadDN)
			assert.Equal(t, ReasonBadDN, Reason(err))
		})
	}
}

func TestDNEqual(t *testing.T) {
	base := "CN=Test CA,O=Acme\\, Inc.,C=DE"
	for _, other := range []string{
		`CN="Test CA", O="Acme, Inc.", C=DE`,
		`cn=test ca,o=ACME\2C INC.,c=de`,
		`CN=Test  CA;O=Acme\, Inc.;C=DE`,
		`2.5.4.3=#130754657374204341,O=Acme\, Inc.,C=DE`,
	} {
		a, err := ParseDN(base)
		require.NoError(t, err)
		b, err := ParseDN(other)
		require.NoError(t, err, other)
		assert.True(t, a.Equal(b), "ok/%s", other)
	}
	for _, other := range []string{"O=Acme\\, Inc.,CN=Test CA,C=DE", "CN=Test CA,O=Acme,C=DE", "CN=Test CA,O=Acme\\, Inc."} {
		a, _ := ParseDN(base)
		b, err := ParseDN(other)
		require.NoError(t, err)
		assert.False(t, a.Equal(b), "fail/%s", other)
	}
}

func TestDNFromRaw(t *testing.T) {
	name := pkix.Name{CommonName: "a, b", Organization: []string{"O+1"}, Country: []string{"DE"}}
	der, err := asn1.Marshal(name.ToRDNSequence())
	require.NoError(t, err)
	dn, err := DNFromRaw(der)
	require.NoError(t, err)
	assert.Equal(t, `CN=a\, b,O=O\+1,C=DE`, dn.String())
	_, err = DNFromRaw([]byte{0x30, 0x01})
	require.ErrorIs(t, err, ErrBadDN)
}

func FuzzParseDN(f *testing.F) {
	for _, s := range []string{"CN=a,O=b", `CN="a, b"`, `CN=a\, b+OU=c`, `CN=\ a\ `, "1.2.3=#0c03616263", "CN=#020101", `CN=\00\ff`, " e = x ; c = y "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		dn, err := ParseDN(s)
		if err != nil {
			return
		}
		out := dn.String()
		dn2, err := ParseDN(out)
		if err != nil {
			t.Fatalf("format %q of %q does not parse: %v", out, s, err)
		}
		if !dnIdentical(dn, dn2) {
			t.Fatalf("round trip of %q: %#v != %#v (via %q)", s, dn, dn2, out)
		}
		if dn2.String() != out || !dn.Equal(dn2) {
			t.Fatalf("format not stable for %q", s)
		}
	})
}

func dnIdentical(a, b DN) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j := range a[i] {
			x, y := a[i][j], b[i][j]
			if !x.Type.Equal(y.Type) || x.Value != y.Value || x.Raw != y.Raw {
				return false
			}
		}
	}
	return true
}
