package dom

import (
	"bytes"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/testpki"
	"github.com/wssgw/wssgw/internal/trust"
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// TestTokenCache: what tokenCache remembers is keyed by everything the
// result depends on. One engine resolves each reference twice (the second
// time from the cache) and gets what a fresh engine gets: a token with
// other bytes is parsed anew, a bad one fails each time, and an
// X509IssuerSerial is looked up per trust index (a reload's new index does
// not inherit the old one's answers).
func TestTokenCache(t *testing.T) {
	dir := t.TempDir()
	ca := testpki.NewCA(t, "cache CA")
	a, b := ca.IssueRSA(t, dir, "a"), ca.IssueRSA(t, dir, "b")
	ixA, ixB := trust.NewIndex([]*x509.Certificate{a.Cert}), trust.NewIndex([]*x509.Certificate{b.Cert})
	e := newEngine(t)
	load := func(data string) *message {
		m := &message{engine: e, keys: map[string][]byte{}, doc: new(xmlscan.Document), sd: new(xmlscan.Document), plain: true}
		m.res = &wss.Result{Security: [2]int{-1, -1}, Token: -1}
		require.NoError(t, m.load([]byte(data)))
		return m
	}
	bst := func(der []byte) string {
		return `<wsse:BinarySecurityToken xmlns:wsse="` + nsWSSE + `" EncodingType="` + encBase64 + `" ValueType="` + vtX509v3 + `">` +
			base64.StdEncoding.EncodeToString(der) + `</wsse:BinarySecurityToken>`
	}
	for _, tc := range []struct {
		name string
		der  []byte
		want *testpki.Leaf
	}{{"ok/a", a.Cert.Raw, a}, {"ok/b", b.Cert.Raw, b}, {"ok/a-again", a.Cert.Raw, a}, {"fail/not-a-certificate", []byte("not DER"), nil}} {
		for round := range 2 {
			t.Run(fmt.Sprintf("bst/%s/%d", tc.name, round), func(t *testing.T) {
				m := load(bst(tc.der))
				certs, err := m.bst(m.find(t, "BinarySecurityToken"))
				if tc.want == nil {
					assert.Equal(t, wss.ReasonToken, reasonOf(err), "%v", err)
					return
				}
				require.NoError(t, err)
				require.Len(t, certs, 1)
				assert.True(t, tc.want.Cert.Equal(certs[0]))
			})
		}
	}
	// The certificate of an X509v3 KeyIdentifier or of an X509Data's
	// X509Certificate is kept as an X509v3 token's is (the same parse of
	// the same text), so each case runs after the bst ones of the same
	// bytes too.
	keyID := func(der []byte) string {
		return `<wsse:SecurityTokenReference xmlns:wsse="` + nsWSSE + `"><wsse:KeyIdentifier EncodingType="` + encBase64 + `" ValueType="` + vtX509v3 + `">` +
			base64.StdEncoding.EncodeToString(der) + `</wsse:KeyIdentifier></wsse:SecurityTokenReference>`
	}
	carried := func(der []byte) string {
		return `<wsse:SecurityTokenReference xmlns:wsse="` + nsWSSE + `"><ds:X509Data xmlns:ds="` + nsDS + `"><ds:X509Certificate>` +
			base64.StdEncoding.EncodeToString(der) + `</ds:X509Certificate></ds:X509Data></wsse:SecurityTokenReference>`
	}
	for _, form := range []struct {
		name string
		make func([]byte) string
	}{{"key-identifier", keyID}, {"x509-certificate", carried}} {
		for _, tc := range []struct {
			name string
			der  []byte
			want *testpki.Leaf
		}{{"ok/a", a.Cert.Raw, a}, {"ok/b", b.Cert.Raw, b}, {"ok/a-again", a.Cert.Raw, a}, {"fail/not-a-certificate", []byte("not DER"), nil}} {
			for round := range 2 {
				t.Run(fmt.Sprintf("%s/%s/%d", form.name, tc.name, round), func(t *testing.T) {
					m := load(form.make(tc.der))
					ref, err := m.str(m.find(t, "SecurityTokenReference"))
					if tc.want == nil {
						assert.Equal(t, wss.ReasonToken, reasonOf(err), "%v", err)
						return
					}
					require.NoError(t, err)
					require.Len(t, ref.certs, 1)
					assert.True(t, tc.want.Cert.Equal(ref.certs[0]))
				})
			}
		}
	}
	serial := func(l *testpki.Leaf) string {
		return `<ds:X509Data xmlns:ds="` + nsDS + `"><ds:X509IssuerSerial><ds:X509IssuerName>CN=cache CA</ds:X509IssuerName><ds:X509SerialNumber>` +
			l.Cert.SerialNumber.String() + `</ds:X509SerialNumber></ds:X509IssuerSerial></ds:X509Data>`
	}
	for _, tc := range []struct {
		name string
		ref  *testpki.Leaf
		ix   *trust.Index
		want *testpki.Leaf
	}{{"ok/a-in-a", a, ixA, a}, {"fail/a-in-b", a, ixB, nil}, {"ok/b-in-b", b, ixB, b}, {"fail/b-in-a", b, ixA, nil}} {
		for round := range 2 {
			t.Run(fmt.Sprintf("issuer-serial/%s/%d", tc.name, round), func(t *testing.T) {
				m := load(serial(tc.ref))
				ref, err := m.x509Data(m.find(t, "X509Data"))
				require.NoError(t, err)
				c, err := m.leaf(ref, tc.ix)
				if tc.want == nil {
					assert.Equal(t, wss.ReasonToken, reasonOf(err), "%v", err)
					return
				}
				require.NoError(t, err)
				assert.True(t, tc.want.Cert.Equal(c))
			})
		}
	}
}

// TestTokenCacheBoundsText: a token text over tokenCacheMaxText is not
// kept, so the cache's memory does not follow what senders put in tokens.
func TestTokenCacheBoundsText(t *testing.T) {
	var c tokenCache
	for _, tc := range []struct {
		name string
		n    int
		kept bool
	}{{"ok/kept-at-bound", tokenCacheMaxText, true}, {"fail/over-bound-not-kept", tokenCacheMaxText + 1, false}} {
		t.Run(tc.name, func(t *testing.T) {
			text := bytes.Repeat([]byte("A"), tc.n)
			c.putToken("vt", text, nil)
			if _, ok := c.token("vt", text); ok != tc.kept {
				t.Fatalf("kept = %v, want %v", ok, tc.kept)
			}
		})
	}
}

// TestTokenCacheIssuers: an X509IssuerName is parsed once per exact text
// and the cache answers what trust.ParseIssuerName answers, a name that
// does not parse included; a name over issuerCacheMaxText is parsed but
// not kept.
func TestTokenCacheIssuers(t *testing.T) {
	var c tokenCache
	long := "CN=" + strings.Repeat("a", issuerCacheMaxText)
	for _, tc := range []struct {
		name, dn string
		kept     bool
	}{
		{"ok/name", `CN=Issuing CA 1,O=Acme\, Inc.,C=DE`, true},
		{"ok/other-spelling", `cn = issuing ca 1 ; o="Acme, Inc." ; c=de`, true},
		{"ok/other-name", `CN=Issuing CA 2,O=Acme\, Inc.,C=DE`, true},
		{"fail/does-not-parse", `CN=Issuing CA 1,O=Acme, Inc.,C=DE`, true},
		{"fail/over-bound-not-kept", long, false},
	} {
		for round := range 2 {
			t.Run(fmt.Sprintf("%s/%d", tc.name, round), func(t *testing.T) {
				want, err := trust.ParseIssuerName(tc.dn)
				got, ok := c.issuer(tc.dn)
				assert.Equal(t, err == nil, ok)
				assert.Equal(t, want, got)
				_, inMap := c.issuers[tc.dn]
				assert.Equal(t, tc.kept, inMap)
			})
		}
	}
	a, _ := c.issuer(`CN=Issuing CA 1,O=Acme\, Inc.,C=DE`)
	b, _ := c.issuer(`cn = issuing ca 1 ; o="Acme, Inc." ; c=de`)
	other, _ := c.issuer(`CN=Issuing CA 2,O=Acme\, Inc.,C=DE`)
	assert.Equal(t, a, b, "two spellings of one name")
	assert.NotEqual(t, a, other)
}
