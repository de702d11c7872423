package dom

import (
	"context"
	"crypto/x509"
	"encoding/asn1"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/reload"
	"github.com/wssgw/wssgw/internal/testpki"
	"github.com/wssgw/wssgw/internal/trust"
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// loadPlain gates data as a plain document and returns the message state,
// for tests of the engine's building blocks.
func loadPlain(t testing.TB, data string) *message {
	t.Helper()
	e := newEngine(t)
	m := &message{engine: e, keys: map[string][]byte{}, doc: new(xmlscan.Document), sd: new(xmlscan.Document), plain: true}
	m.res = &wss.Result{Security: [2]int{-1, -1}, Token: -1}
	require.NoError(t, m.load([]byte(data)))
	return m
}

// find returns the index of the first element named local.
func (m *message) find(t testing.TB, local string) int {
	t.Helper()
	for i := range m.doc.Elements {
		if m.doc.Elements[i].Local == local {
			return i
		}
	}
	t.Fatalf("no %s", local)
	return -1
}

// TestX509DataLookupKeys: a ds:X509Data names one certificate. Its lookup
// keys (X509IssuerSerial, X509SKI) must each appear at most once and all
// name the certificate used; carried X509Certificates must include the one
// the keys name (XMLDSig 1.1 §4.5.4). Before, the last key won.
func TestX509DataLookupKeys(t *testing.T) {
	dir := t.TempDir()
	ca := testpki.NewCA(t, "X509Data CA")
	a := ca.IssueRSA(t, dir, "a")
	b := ca.IssueRSA(t, dir, "b")
	ix := trust.NewIndex([]*x509.Certificate{a.Cert, b.Cert})

	serial := func(l *testpki.Leaf) string {
		return fmt.Sprintf(`<ds:X509IssuerSerial><ds:X509IssuerName>CN=X509Data CA</ds:X509IssuerName><ds:X509SerialNumber>%s</ds:X509SerialNumber></ds:X509IssuerSerial>`, l.Cert.SerialNumber)
	}
	ski := func(l *testpki.Leaf) string {
		return `<ds:X509SKI>` + base64.StdEncoding.EncodeToString(l.Cert.SubjectKeyId) + `</ds:X509SKI>`
	}
	cert := func(l *testpki.Leaf) string {
		return `<ds:X509Certificate>` + base64.StdEncoding.EncodeToString(l.Cert.Raw) + `</ds:X509Certificate>`
	}
	tests := []struct {
		name, kids string
		want       *testpki.Leaf // the certificate the X509Data names
		kind       string
		reason     wss.Reason // from x509Data or leaf
	}{
		{name: "ok/issuer-serial", kids: serial(a), want: a, kind: wss.KeyRefIssuerSerial},
		{name: "ok/ski", kids: ski(b), want: b, kind: wss.KeyRefSKI},
		{name: "ok/certificate", kids: cert(a), want: a, kind: wss.KeyRefX509Data},
		// A chain without lookup key: the first certificate is the leaf;
		// the trust store decides about the rest.
		{name: "ok/certificates", kids: cert(a) + cert(b), want: a, kind: wss.KeyRefX509Data},
		// zeep: X509IssuerSerial with the certificate it names.
		{name: "ok/issuer-serial-and-certificate", kids: serial(b) + cert(b), want: b, kind: wss.KeyRefIssuerSerial},
		{name: "ok/certificate-and-issuer-serial", kids: cert(a) + serial(b) + cert(b), want: b, kind: wss.KeyRefIssuerSerial},
		{name: "ok/issuer-serial-and-ski-same", kids: serial(a) + ski(a), want: a, kind: wss.KeyRefIssuerSerial},
		{name: "ok/ski-and-certificate", kids: ski(b) + cert(b), want: b, kind: wss.KeyRefSKI},
		{name: "fail/empty", kids: "", reason: wss.ReasonToken},
		{name: "fail/two-issuer-serials", kids: serial(a) + serial(b), reason: wss.ReasonToken},
		{name: "fail/two-issuer-serials-same", kids: serial(a) + serial(a), reason: wss.ReasonToken},
		{name: "fail/two-skis", kids: ski(a) + ski(b), reason: wss.ReasonToken},
		// The last key used to win: b by SKI, although the IssuerSerial
		// names a.
		{name: "fail/issuer-serial-and-ski-differ", kids: serial(a) + ski(b), reason: wss.ReasonToken},
		{name: "fail/ski-and-issuer-serial-differ", kids: ski(b) + serial(a), reason: wss.ReasonToken},
		// The carried certificate is not the one the key names.
		{name: "fail/issuer-serial-names-other-certificate", kids: serial(a) + cert(b), reason: wss.ReasonToken},
		{name: "fail/ski-names-other-certificate", kids: cert(a) + ski(b), reason: wss.ReasonToken},
		{name: "fail/subject-name", kids: `<ds:X509SubjectName>CN=a</ds:X509SubjectName>`, reason: wss.ReasonToken},
		// Each carried certificate is parsed before anything is verified.
		{name: "ok/at-most-carried", kids: cert(a) + strings.Repeat(cert(b), maxCarried-1), want: a, kind: wss.KeyRefX509Data},
		{name: "fail/too-many-carried", kids: cert(a) + strings.Repeat(cert(b), maxCarried), reason: wss.ReasonToken},
	}
	// One engine, twice: the second round finds the certificates parsed
	// and their lookup values kept (tokenCache, Engine.carried) by the
	// first, and must decide the same.
	e := newEngine(t)
	for round := range 2 {
		for _, tc := range tests {
			t.Run(fmt.Sprintf("%s/%d", tc.name, round), func(t *testing.T) {
				m := &message{engine: e, keys: map[string][]byte{}, doc: new(xmlscan.Document), sd: new(xmlscan.Document), plain: true}
				m.res = &wss.Result{Security: [2]int{-1, -1}, Token: -1}
				require.NoError(t, m.load([]byte(`<ds:KeyInfo xmlns:ds="`+nsDS+`"><ds:X509Data>`+tc.kids+`</ds:X509Data></ds:KeyInfo>`)))
				ref, err := m.x509Data(m.find(t, "X509Data"))
				var c *x509.Certificate
				if err == nil {
					c, err = m.leaf(ref, ix)
				}
				if tc.reason != 0 {
					require.Error(t, err)
					assert.Equal(t, tc.reason, reasonOf(err), "%v", err)
					return
				}
				require.NoError(t, err)
				assert.Equal(t, tc.kind, ref.kind)
				assert.True(t, tc.want.Cert.Equal(c), "names %s, want %s", c.Subject, tc.want.Cert.Subject)
				// An EncryptedKey's recipient is matched the same way.
				assert.True(t, refMatches(ref, trust.NewCertKeys(tc.want.Cert)))
				other := a
				if tc.want == a {
					other = b
				}
				assert.False(t, refMatches(ref, trust.NewCertKeys(other.Cert)))
			})
		}
	}
}

// TestSTRDereferenced: the STR-Transform output for a BinarySecurityToken is
// its exclusive canonical form with the default namespace rendered (xmlns=""
// when there is none), the bytes Apache Santuario digests for WSS4J (WSS 1.1
// §8.3). Without xmlns="" a WSS4J STR-Transform Reference never matched.
func TestSTRDereferenced(t *testing.T) {
	const (
		attrs = ` EncodingType="` + encBase64 + `" ValueType="` + vtX509v3 + `" wsu:Id="X509-1">AAAA</wsse:BinarySecurityToken>`
		decls = ` xmlns:wsse="` + nsWSSE + `" xmlns:wsu="` + nsWSU + `"`
	)
	doc := func(envelopeNS string) string {
		return `<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"` + envelopeNS + `><soap:Header>` +
			`<wsse:Security` + decls + `><wsse:BinarySecurityToken` + attrs + `</wsse:Security></soap:Header></soap:Envelope>`
	}
	tests := []struct{ name, doc, want string }{
		{"ok/no-default-namespace", doc(""), `<wsse:BinarySecurityToken xmlns=""` + decls + attrs},
		{"ok/default-namespace-in-scope", doc(` xmlns="urn:default"`), `<wsse:BinarySecurityToken xmlns="urn:default"` + decls + attrs},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := loadPlain(t, tc.doc)
			var out strings.Builder
			require.NoError(t, m.strDereferenced(&out, "http://www.w3.org/2001/10/xml-exc-c14n#", m.find(t, "BinarySecurityToken")))
			assert.Equal(t, tc.want, out.String())
		})
	}
}

// TestPasswordTextNonce: a PasswordText UsernameToken's Nonce is recorded
// like a PasswordDigest one's, so the policy's replay store sees it; WSS4J
// sends a Nonce with both types. Before, a PasswordText message could be
// replayed as often as its Timestamp allowed.
func TestPasswordTextNonce(t *testing.T) {
	dir := t.TempDir()
	users := filepath.Join(dir, "users")
	require.NoError(t, os.WriteFile(users, []byte("alice:pw\n"), 0o600))
	cp := config.DefaultPolicy()
	cp.Require = []string{config.RequireUsernameToken}
	cp.UsernameToken.CredentialsFile = users
	cp.UsernameToken.AllowPasswordText = true
	p, err := wss.Compile("text", cp, &memStore{seen: map[string]bool{}}, reload.Options{})
	require.NoError(t, err)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	msg := func(nonce string) []byte {
		return []byte(`<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Header>` +
			`<wsse:Security xmlns:wsse="` + nsWSSE + `" xmlns:wsu="` + nsWSU + `"><wsse:UsernameToken>` +
			`<wsse:Username>alice</wsse:Username><wsse:Password Type="` + pwText + `">pw</wsse:Password>` + nonce +
			`<wsu:Created>2026-01-02T03:04:00Z</wsu:Created></wsse:UsernameToken></wsse:Security></soap:Header>` +
			`<soap:Body/></soap:Envelope>`)
	}
	nonce := `<wsse:Nonce EncodingType="` + encBase64 + `">MTIzNDU2Nzg5MDEyMzQ1Ng==</wsse:Nonce>`
	e := newEngine(t)
	tests := []struct {
		name   string
		msg    []byte
		reason wss.Reason // of Process, then of the second Check
	}{
		{name: "ok/nonce-recorded-replay-rejected", msg: msg(nonce), reason: wss.ReasonReplay},
		{name: "ok/no-nonce-nothing-to-record", msg: msg("")},
		{name: "fail/nonce-encoding", msg: msg(`<wsse:Nonce EncodingType="urn:x">MTIz</wsse:Nonce>`), reason: wss.ReasonAuthentication},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := e.Process(tc.msg, p, now)
			if strings.HasPrefix(tc.name, "fail/") {
				require.Equal(t, tc.reason, reasonOf(err), "%v", err)
				return
			}
			require.NoError(t, err)
			require.NotNil(t, res.Username)
			assert.False(t, res.Username.Digest)
			require.NoError(t, p.Check(context.Background(), res, now))
			res, err = e.Process(tc.msg, p, now)
			require.NoError(t, err)
			err = p.Check(context.Background(), res, now)
			if tc.reason == 0 {
				assert.NoError(t, err)
				return
			}
			assert.Equal(t, tc.reason, reasonOf(err), "%v", err)
		})
	}
}

// memStore is an in-memory replay store.
type memStore struct{ seen map[string]bool }

func (s *memStore) Seen(_ context.Context, key []byte, _ time.Time) (bool, error) {
	was := s.seen[string(key)]
	s.seen[string(key)] = true
	return was, nil
}

// TestPKIPathBound: an X509PKIPathv1 token is parsed certificate by
// certificate before any signature is verified; its length is bounded.
func TestPKIPathBound(t *testing.T) {
	ca := testpki.NewCA(t, "PKIPath CA")
	leaf := ca.IssueRSA(t, t.TempDir(), "leaf")
	for _, tc := range []struct {
		name string
		n    int
		ok   bool
	}{{"ok/at-most-carried", maxCarried, true}, {"fail/too-many-carried", maxCarried + 1, false}} {
		t.Run(tc.name, func(t *testing.T) {
			raws := make([]asn1.RawValue, tc.n)
			for i := range raws {
				raws[i] = asn1.RawValue{FullBytes: leaf.Cert.Raw}
			}
			der, err := asn1.Marshal(raws)
			require.NoError(t, err)
			m := loadPlain(t, `<wsse:BinarySecurityToken xmlns:wsse="`+nsWSSE+`" ValueType="`+vtPKIPath+`" EncodingType="`+encBase64+`">`+
				base64.StdEncoding.EncodeToString(der)+`</wsse:BinarySecurityToken>`)
			certs, err := m.bst(0)
			if tc.ok {
				require.NoError(t, err)
				assert.Len(t, certs, tc.n)
				return
			}
			assert.Equal(t, wss.ReasonToken, reasonOf(err), "%v", err)
		})
	}
}
