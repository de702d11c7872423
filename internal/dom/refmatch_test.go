package dom

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
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

// refMatchesBefore is refMatches as it was before the lookup values were
// kept per certificate (issue 14): both DNs parsed and canonicalized, the
// SKI and the thumbprint computed, at every call. It is the reference the
// kept-values path must decide exactly as.
func refMatchesBefore(ref *tokenRef, c *x509.Certificate) bool {
	switch ref.kind {
	case wss.KeyRefBST, wss.KeyRefX509Data, wss.KeyRefX509KeyIdentifier:
		return len(ref.certs) > 0 && ref.certs[0].Equal(c)
	case wss.KeyRefIssuerSerial, wss.KeyRefSKI:
		if ref.serial != nil {
			want, err1 := trust.ParseDN(ref.issuer)
			got, err2 := trust.DNFromRaw(c.RawIssuer)
			if err1 != nil || err2 != nil || !want.Equal(got) || c.SerialNumber.Cmp(ref.serial) != 0 {
				return false
			}
		}
		if ref.ski != nil {
			ski, err := trust.ComputeSKI(c)
			if !(err == nil && bytes.Equal(ski, ref.ski)) && !(len(c.SubjectKeyId) > 0 && bytes.Equal(c.SubjectKeyId, ref.ski)) {
				return false
			}
		}
		return ref.serial != nil || ref.ski != nil
	case wss.KeyRefThumbprint:
		sum := sha1.Sum(c.Raw)
		return bytes.Equal(sum[:], ref.thumb)
	}
	return false
}

// refPKI is a set of certificates whose issuers differ in the ways
// X509IssuerName strings do: attribute order, escaping, multi-valued RDNs,
// non-ASCII and IA5 values, and two issuers that differ in one attribute
// only and issue the same serial number.
type refPKI struct {
	leaves map[string]*refLeaf
	all    []*refLeaf
}

type refLeaf struct {
	name string
	cert *x509.Certificate
	key  crypto.Signer
}

var (
	oidCN     = asn1.ObjectIdentifier{2, 5, 4, 3}
	oidOU     = asn1.ObjectIdentifier{2, 5, 4, 11}
	oidO      = asn1.ObjectIdentifier{2, 5, 4, 10}
	oidC      = asn1.ObjectIdentifier{2, 5, 4, 6}
	oidL      = asn1.ObjectIdentifier{2, 5, 4, 7}
	oidEmail  = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 1}
	oidSerNum = asn1.ObjectIdentifier{2, 5, 4, 5}
)

func atv(t asn1.ObjectIdentifier, v any) pkix.AttributeTypeAndValue {
	return pkix.AttributeTypeAndValue{Type: t, Value: v}
}

// utf8String is an ASN.1 UTF8String value (pkix marshals Go strings as
// PrintableString when they fit, UTF8String otherwise).
func utf8String(s string) asn1.RawValue {
	return asn1.RawValue{Tag: asn1.TagUTF8String, Bytes: []byte(s)}
}

func ia5String(s string) asn1.RawValue {
	return asn1.RawValue{Tag: asn1.TagIA5String, Bytes: []byte(s)}
}

// newRefPKI makes the issuers and one leaf of each. rsaKeys gives the
// leaves RSA keys (decryption keys need them); otherwise P-256 keys.
func newRefPKI(t testing.TB, rsaKeys bool) *refPKI {
	t.Helper()
	issuers := map[string]pkix.RDNSequence{
		// CN=Issuing CA 1,OU=PKI,O=Acme\, Inc.,C=DE (ASN.1 order is C first)
		"a": {{atv(oidC, "DE")}, {atv(oidO, "Acme, Inc.")}, {atv(oidOU, "PKI")}, {atv(oidCN, "Issuing CA 1")}},
		// Differs from a in the CN only; its leaf has a's leaf's serial.
		"b": {{atv(oidC, "DE")}, {atv(oidO, "Acme, Inc.")}, {atv(oidOU, "PKI")}, {atv(oidCN, "Issuing CA 2")}},
		// A multi-valued RDN: CN=Issuing CA+OU=Ops,O=Acme,C=DE.
		"mv": {{atv(oidC, "DE")}, {atv(oidO, "Acme")}, {atv(oidCN, "Issuing CA"), atv(oidOU, "Ops")}},
		// UTF8String with non-ASCII, an IA5String e-mail, a value with
		// characters RFC 4514 escapes, and a serialNumber attribute.
		"intl": {{atv(oidC, "DE")}, {atv(oidL, utf8String("Köln"))}, {atv(oidO, utf8String(`Müller+Söhne "GmbH"; <Köln>`))},
			{atv(oidSerNum, "HRB 4711")}, {atv(oidEmail, ia5String("pki@example.org"))}, {atv(oidCN, utf8String("Jürgen's CA"))}},
	}
	serials := map[string]int64{"a": 4096, "b": 4096, "mv": 7, "intl": 1 << 40}
	p := &refPKI{leaves: map[string]*refLeaf{}}
	for _, name := range []string{"a", "b", "mv", "intl"} {
		caKey := testpki.ECKey(t)
		rawSubject, err := asn1.Marshal(issuers[name])
		require.NoError(t, err)
		caTmpl := &x509.Certificate{
			SerialNumber: big.NewInt(1), RawSubject: rawSubject,
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
			IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
		}
		der, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, caKey.Public(), caKey)
		require.NoError(t, err)
		ca, err := x509.ParseCertificate(der)
		require.NoError(t, err)
		var key crypto.Signer = testpki.ECKey(t)
		if rsaKeys {
			key, err = rsa.GenerateKey(rand.Reader, 2048)
			require.NoError(t, err)
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serials[name]), Subject: pkix.Name{CommonName: "leaf " + name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		}
		switch name {
		case "a":
			// An SKI extension that is not RFC 3280 method (1): both
			// forms must name the certificate.
			tmpl.SubjectKeyId = []byte("not the key's SHA-1")
		case "mv":
			tmpl.SubjectKeyId = nil // no extension: only the computed SKI names it
		}
		der, err = x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
		require.NoError(t, err)
		c, err := x509.ParseCertificate(der)
		require.NoError(t, err)
		l := &refLeaf{name: name, cert: c, key: key}
		p.leaves[name] = l
		p.all = append(p.all, l)
	}
	require.Empty(t, p.leaves["mv"].cert.SubjectKeyId, "the mv leaf must lack the SKI extension")
	return p
}

func berHex(t testing.TB, v any) string {
	der, err := asn1.Marshal(v)
	require.NoError(t, err)
	return "#" + hex.EncodeToString(der)
}

func computedSKI(t testing.TB, c *x509.Certificate) []byte {
	ski, err := trust.ComputeSKI(c)
	require.NoError(t, err)
	return ski
}

// TestRefMatchesAsBefore: the lookup values kept per certificate
// (trust.CertKeys) and the issuer parsed once per reference decide every
// reference exactly as parsing both DNs at every comparison did. Each
// case is compared with every certificate of the set, through one
// reference (its issuer parsed once for all of them), with fresh values
// and with the engine's kept ones (twice: computed, then from the cache).
func TestRefMatchesAsBefore(t *testing.T) {
	p := newRefPKI(t, false)
	a, b, mv, intl := p.leaves["a"], p.leaves["b"], p.leaves["mv"], p.leaves["intl"]
	is := func(issuer string, serial int64) *tokenRef {
		return &tokenRef{kind: wss.KeyRefIssuerSerial, issuer: issuer, serial: big.NewInt(serial), token: -1}
	}
	ski := func(v []byte) *tokenRef { return &tokenRef{kind: wss.KeyRefSKI, ski: v, token: -1} }
	const aDN = `CN=Issuing CA 1,OU=PKI,O=Acme\, Inc.,C=DE`
	tests := []struct {
		name string
		ref  *tokenRef
		want *refLeaf // the one certificate it names; nil: none
	}{
		{"ok/issuer-serial", is(aDN, 4096), a},
		{"ok/spacing", is(` CN = Issuing CA 1 ,OU= PKI,  O=Acme\, Inc. , C=DE `, 4096), a},
		{"ok/inner-white-space-runs", is(`CN=Issuing   CA  1,OU=PKI,O=Acme\,   Inc.,C=DE`, 4096), a},
		{"ok/case", is(`cn=issuing ca 1,ou=pki,o=ACME\, INC.,c=de`, 4096), a},
		{"ok/quoted", is(`CN="Issuing CA 1", OU="PKI", O="Acme, Inc.", C="DE"`, 4096), a},
		{"ok/hex-escaped-comma", is(`CN=Issuing CA 1,OU=PKI,O=Acme\2C Inc.,C=DE`, 4096), a},
		{"ok/hex-escaped-letters", is(`CN=\49ssuing CA 1,OU=PKI,O=Acme\, Inc.,C=DE`, 4096), a},
		{"ok/semicolons", is(`CN=Issuing CA 1;OU=PKI;O=Acme\, Inc.;C=DE`, 4096), a},
		{"ok/oid-types", is(`2.5.4.3=Issuing CA 1,OID.2.5.4.11=PKI,2.5.4.10=Acme\, Inc.,2.5.4.6=DE`, 4096), a},
		{"ok/ber-value", is(`CN=`+berHex(t, "Issuing CA 1")+`,OU=PKI,O=Acme\, Inc.,C=DE`, 4096), a},
		{"ok/serial-leading-zeros", &tokenRef{kind: wss.KeyRefIssuerSerial, issuer: aDN, serial: mustBig("0004096"), token: -1}, a},
		{"ok/other-issuer-same-serial", is(`CN=Issuing CA 2,OU=PKI,O=Acme\, Inc.,C=DE`, 4096), b},
		{"ok/multi-valued", is(`CN=Issuing CA+OU=Ops,O=Acme,C=DE`, 7), mv},
		{"ok/multi-valued-other-order", is(`OU=Ops+CN=Issuing CA,O=Acme,C=DE`, 7), mv},
		{"ok/multi-valued-spacing-case", is(`ou = ops + cn = issuing ca , o=acme, c=de`, 7), mv},
		{"ok/international", is(`CN=Jürgen's CA,EMAILADDRESS=pki@example.org,SERIALNUMBER=HRB 4711,O=Müller\+Söhne \"GmbH\"\; \<Köln\>,L=Köln,C=DE`, 1<<40), intl},
		{"ok/international-escaped", is(`CN=J\C3\BCrgen's CA,E=PKI@EXAMPLE.ORG,2.5.4.5=hrb 4711,O="Müller+Söhne \"GmbH\"; <Köln>",L=K\c3\b6ln,C=DE`, 1<<40), intl},
		{"fail/rdn-order-reversed", is(`C=DE,O=Acme\, Inc.,OU=PKI,CN=Issuing CA 1`, 4096), nil},
		{"fail/attribute-missing", is(`CN=Issuing CA 1,O=Acme\, Inc.,C=DE`, 4096), nil},
		{"fail/attribute-extra", is(`CN=Issuing CA 1,OU=PKI,O=Acme\, Inc.,L=Berlin,C=DE`, 4096), nil},
		{"fail/value-differs", is(`CN=Issuing CA 3,OU=PKI,O=Acme\, Inc.,C=DE`, 4096), nil},
		{"fail/multi-valued-split", is(`CN=Issuing CA,OU=Ops,O=Acme,C=DE`, 7), nil},
		{"fail/multi-valued-joined", is(`CN=Issuing CA 1+OU=PKI,O=Acme\, Inc.,C=DE`, 4096), nil},
		{"fail/space-inside-word", is(`CN=IssuingCA 1,OU=PKI,O=Acme\, Inc.,C=DE`, 4096), nil},
		{"fail/serial", is(aDN, 4097), nil},
		{"fail/negative-serial", is(aDN, -4096), nil},
		{"fail/serial-of-other-issuer", is(`CN=Issuing CA+OU=Ops,O=Acme,C=DE`, 4096), nil},
		{"fail/does-not-parse", is(`CN=Issuing CA 1,,OU=PKI`, 4096), nil},
		{"fail/unescaped-comma", is(`CN=Issuing CA 1,OU=PKI,O=Acme, Inc.,C=DE`, 4096), nil},
		{"fail/empty-dn", is(``, 4096), nil},
		{"ok/ski-extension", ski(a.cert.SubjectKeyId), a},
		{"ok/ski-computed-besides-extension", ski(computedSKI(t, a.cert)), a},
		{"ok/ski-computed-no-extension", ski(computedSKI(t, mv.cert)), mv},
		{"fail/ski-empty", ski([]byte{}), nil},
		{"fail/ski-other", ski([]byte("0123456789abcdefghij")), nil},
		{"ok/issuer-serial-and-ski", &tokenRef{kind: wss.KeyRefIssuerSerial, issuer: aDN, serial: big.NewInt(4096), ski: a.cert.SubjectKeyId, token: -1}, a},
		{"fail/issuer-serial-and-ski-differ", &tokenRef{kind: wss.KeyRefIssuerSerial, issuer: aDN, serial: big.NewInt(4096), ski: computedSKI(t, b.cert), token: -1}, nil},
		{"fail/no-lookup-key", &tokenRef{kind: wss.KeyRefSKI, token: -1}, nil},
		{"ok/thumbprint", &tokenRef{kind: wss.KeyRefThumbprint, thumb: sha1Of(intl.cert.Raw), token: -1}, intl},
		{"fail/thumbprint-short", &tokenRef{kind: wss.KeyRefThumbprint, thumb: sha1Of(intl.cert.Raw)[:19], token: -1}, nil},
		{"ok/bst", &tokenRef{kind: wss.KeyRefBST, certs: []*x509.Certificate{b.cert}, token: 0}, b},
		{"ok/x509v3-key-identifier", &tokenRef{kind: wss.KeyRefX509KeyIdentifier, certs: []*x509.Certificate{mv.cert}, token: -1}, mv},
		{"fail/encrypted-key", &tokenRef{kind: wss.KeyRefEncryptedKey, key: []byte("k"), token: -1}, nil},
	}
	e := newEngine(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for round := range 2 {
				for _, l := range p.all {
					want := tc.want == l
					before := refMatchesBefore(tc.ref, l.cert)
					require.Equal(t, want, before, "the reference (before) on %s: the case is wrong", l.name)
					assert.Equal(t, before, refMatches(tc.ref, trust.NewCertKeys(l.cert)), "fresh values of %s, round %d", l.name, round)
					assert.Equal(t, before, refMatches(tc.ref, e.certKeys(l.cert)), "kept values of %s, round %d", l.name, round)
				}
			}
		})
	}
}

func mustBig(s string) *big.Int {
	n, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic(s)
	}
	return n
}

func sha1Of(b []byte) []byte {
	s := sha1.Sum(b)
	return s[:]
}

// TestRecipientByIssuerSerial: an EncryptedKey's X509IssuerSerial picks
// the decryption key it names among several, in any of its DN's
// spellings; a name only another key's certificate has picks that key,
// one none has picks none. The kept path (recipient) picks what the
// comparison before picked, and so does the second round, which finds the
// issuers parsed, the X509v3 certificates parsed (tokenCache) and the
// decryption certificates' values kept (certKeys) by the first.
func TestRecipientByIssuerSerial(t *testing.T) {
	pki := newRefPKI(t, true)
	dir := t.TempDir()
	pc := config.DefaultPolicy()
	pc.Replay = "off"
	for _, l := range pki.all {
		cf, kf := filepath.Join(dir, l.name+".crt"), filepath.Join(dir, l.name+".key")
		kder, err := x509.MarshalPKCS8PrivateKey(l.key)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(cf, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: l.cert.Raw}), 0o600))
		require.NoError(t, os.WriteFile(kf, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600))
		pc.DecryptionKeys = append(pc.DecryptionKeys, config.KeyFiles{CertFile: cf, KeyFile: kf})
	}
	pol, err := wss.Compile("recipients", pc, nil, reload.Options{})
	require.NoError(t, err)
	other := testpki.NewCA(t, "other CA").IssueRSA(t, dir, "other")
	x509Data := func(kids string) string {
		return `<ds:KeyInfo xmlns:ds="` + nsDS + `"><wsse:SecurityTokenReference xmlns:wsse="` + nsWSSE + `"><ds:X509Data>` + kids + `</ds:X509Data></wsse:SecurityTokenReference></ds:KeyInfo>`
	}
	issuerSerial := func(dn, serial string) string {
		return x509Data(`<ds:X509IssuerSerial><ds:X509IssuerName>` + dn + `</ds:X509IssuerName><ds:X509SerialNumber>` + serial + `</ds:X509SerialNumber></ds:X509IssuerSerial>`)
	}
	keyID := func(vt string, v []byte) string {
		return `<ds:KeyInfo xmlns:ds="` + nsDS + `"><wsse:SecurityTokenReference xmlns:wsse="` + nsWSSE + `"><wsse:KeyIdentifier EncodingType="` + encBase64 + `" ValueType="` + vt + `">` +
			base64.StdEncoding.EncodeToString(v) + `</wsse:KeyIdentifier></wsse:SecurityTokenReference></ds:KeyInfo>`
	}
	tests := []struct {
		name, keyInfo string
		want          string // leaf name; "" none
	}{
		{"ok/a", issuerSerial(`CN=Issuing CA 1,OU=PKI,O=Acme\, Inc.,C=DE`, "4096"), "a"},
		{"ok/b-same-serial", issuerSerial(`cn=issuing ca 2, ou=pki, o="Acme, Inc.", c=de`, "4096"), "b"},
		{"ok/multi-valued", issuerSerial(`OU=Ops+CN=Issuing CA,O=Acme,C=DE`, " 7 "), "mv"},
		{"ok/international", issuerSerial(`CN=J\C3\BCrgen's CA,E=pki@example.org,SERIALNUMBER=HRB 4711,O=Müller\+Söhne \"GmbH\"\; \&lt;Köln\&gt;,L=Köln,C=DE`, "1099511627776"), "intl"},
		{"ok/ski", keyID(vtSKI, computedSKI(t, pki.leaves["mv"].cert)), "mv"},
		{"ok/thumbprint", keyID(vtThumbprint, sha1Of(pki.leaves["b"].cert.Raw)), "b"},
		{"ok/x509v3", keyID(vtX509v3, pki.leaves["intl"].cert.Raw), "intl"},
		{"fail/names-no-key", issuerSerial(`CN=Issuing CA 3,OU=PKI,O=Acme\, Inc.,C=DE`, "4096"), ""},
		{"fail/multi-valued-split", issuerSerial(`CN=Issuing CA,OU=Ops,O=Acme,C=DE`, "7"), ""},
		{"fail/serial", issuerSerial(`CN=Issuing CA 1,OU=PKI,O=Acme\, Inc.,C=DE`, "4095"), ""},
		{"fail/dn-does-not-parse", issuerSerial(`CN=Issuing CA 1,OU=PKI,O=Acme, Inc.,C=DE`, "4096"), ""},
		{"fail/thumbprint", keyID(vtThumbprint, make([]byte, 20)), ""},
		{"fail/x509v3-not-ours", keyID(vtX509v3, other.Cert.Raw), ""},
		{"fail/x509v3-not-a-certificate", keyID(vtX509v3, []byte("not DER")), ""},
	}
	// One engine for every case and round: the second round finds each
	// issuer parsed (tokenCache.issuer) and each certificate's values
	// kept (certKeys) by the first.
	e := newEngine(t)
	for round := range 2 {
		for _, tc := range tests {
			t.Run(fmt.Sprintf("%s/%d", tc.name, round), func(t *testing.T) {
				m := &message{engine: e, p: pol, keys: map[string][]byte{}, doc: new(xmlscan.Document), sd: new(xmlscan.Document), plain: true}
				m.res = &wss.Result{Security: [2]int{-1, -1}, Token: -1}
				require.NoError(t, m.load([]byte(tc.keyInfo)))
				ki := m.find(t, "KeyInfo")
				var before *x509.Certificate
				ref, refErr := m.keyInfo(ki)
				for _, k := range pol.DecryptionKeys() {
					if refErr == nil && refMatchesBefore(ref, k.Certificate) {
						before = k.Certificate
						break
					}
				}
				kp, err := m.recipient(ki)
				if tc.want == "" {
					assert.Nil(t, before, "the reference (before) found a key: the case is wrong")
					require.Error(t, err)
					assert.Equal(t, wss.ReasonToken, reasonOf(err), "%v", err)
					return
				}
				require.NoError(t, err)
				want := pki.leaves[tc.want].cert
				assert.True(t, want.Equal(before), "before picked %v", before)
				assert.True(t, want.Equal(kp.Certificate), "picked %s, want %s", kp.Certificate.Issuer, want.Issuer)
			})
		}
	}
}

// FuzzRefMatchesAsBefore: for any X509IssuerName, serial and SKI, the
// kept-values path decides as the comparison before did, for every
// certificate of the set, fresh and kept.
func FuzzRefMatchesAsBefore(f *testing.F) {
	for _, s := range []string{
		`CN=Issuing CA 1,OU=PKI,O=Acme\, Inc.,C=DE`, `cn = issuing  ca 1; ou=pki; o="Acme, Inc."; c=de`,
		`OU=Ops+CN=Issuing CA,O=Acme,C=DE`, `CN=Issuing CA,OU=Ops,O=Acme,C=DE`, `2.5.4.3=#0c0c49737375696e67204341203,C=DE`,
		`CN=J\C3\BCrgen's CA,E=pki@example.org,SERIALNUMBER=HRB 4711,O=Müller\+Söhne \"GmbH\"\; \<Köln\>,L=Köln,C=DE`, ``, `CN=a,,O=b`,
	} {
		f.Add(s, int64(4096), []byte(nil))
		f.Add(s, int64(7), []byte("not the key's SHA-1"))
	}
	p := newRefPKI(f, false)
	e, err := New(xmlscan.DefaultConfig())
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, issuer string, serial int64, ski []byte) {
		refs := []*tokenRef{
			{kind: wss.KeyRefIssuerSerial, issuer: issuer, serial: big.NewInt(serial), token: -1},
			{kind: wss.KeyRefIssuerSerial, issuer: issuer, serial: big.NewInt(serial), ski: ski, token: -1},
			{kind: wss.KeyRefSKI, ski: ski, token: -1},
			{kind: wss.KeyRefThumbprint, thumb: ski, token: -1},
		}
		for i, ref := range refs {
			for _, l := range p.all {
				before := refMatchesBefore(ref, l.cert)
				if got := refMatches(ref, trust.NewCertKeys(l.cert)); got != before {
					t.Fatalf("ref %d on %s: fresh %v, before %v", i, l.name, got, before)
				}
				if got := refMatches(ref, e.certKeys(l.cert)); got != before {
					t.Fatalf("ref %d on %s: kept %v, before %v", i, l.name, got, before)
				}
			}
		}
	})
}
