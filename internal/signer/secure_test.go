package signer

import (
	"bytes"
	gocrypto "crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/xml"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/testpki"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// pki is the key material shared by the tests of this package.
type pki struct {
	dir                    string
	ca                     *testpki.CA
	caFile                 string
	rsa, ec, p384, ed25519 *testpki.Leaf // signers
	server                 *testpki.Leaf // RSA encryption recipient
}

var (
	pkiOnce sync.Once
	pkiVal  *pki
)

// testPKI makes the CA and leaves once per test binary: RSA key generation
// dominates the run time otherwise.
func testPKI(t testing.TB) *pki {
	t.Helper()
	pkiOnce.Do(func() {
		dir, err := mkdirTemp()
		require.NoError(t, err)
		p := &pki{dir: dir, ca: testpki.NewCA(t, "wssgw Test CA")}
		p.caFile = p.ca.WriteCert(t, dir)
		p.rsa = issueRSA(t, p.ca, dir, "client-rsa", 100, true)
		p.ec = p.ca.Issue(t, dir, "client-ec")
		k384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
		require.NoError(t, err)
		p.p384 = issue(t, p.ca, dir, "client-p384", k384, 101, false)
		_, ked, err := ed25519.GenerateKey(rand.Reader)
		require.NoError(t, err)
		p.ed25519 = issue(t, p.ca, dir, "client-ed25519", ked, 102, false)
		p.server = issueRSA(t, p.ca, dir, "server", 103, false)
		pkiVal = p
	})
	require.NotNil(t, pkiVal, "PKI setup failed earlier")
	return pkiVal
}

func opts(l *testpki.Leaf) Options {
	o := DefaultOptions()
	o.Signer, o.Certificate = loadedKey(l), l.Cert
	return o
}

// loaded holds each leaf's key as crypto.LoadKeyPair returns it, so the
// signer's tests and benchmarks sign with the build's crypto backend as the
// gateway's response signing does (OpenSSL under -tags openssl, issue 18).
var loaded sync.Map // *testpki.Leaf -> crypto.Signer

func loadedKey(l *testpki.Leaf) gocrypto.Signer {
	if k, ok := loaded.Load(l); ok {
		return k.(gocrypto.Signer)
	}
	kp, err := crypto.LoadKeyPair(crypto.KeyFileOptions{CertFile: l.CertFile, KeyFile: l.KeyFile})
	if err != nil {
		panic(err) // the test PKI's own files
	}
	k, _ := loaded.LoadOrStore(l, kp.Signer)
	return k.(gocrypto.Signer)
}

const wsaTo = `<wsa:To xmlns:wsa="http://www.w3.org/2005/08/addressing">https://example.org/orders</wsa:To><wsa:Action xmlns:wsa="http://www.w3.org/2005/08/addressing">urn:PlaceOrder</wsa:Action>`

func TestSecure(t *testing.T) {
	p := testPKI(t)
	wsa := []xml.Name{{Space: "http://www.w3.org/2005/08/addressing", Local: "To"}}
	tests := []struct {
		name  string
		in    []byte
		o     func(o *Options)
		refs  []string // referenced local names, in order
		check func(t *testing.T, out string)
	}{
		{name: "ok/soap11-rsa-bst", in: soapEnv(false, 1024, ""), refs: []string{"Body", "Timestamp"},
			check: func(t *testing.T, out string) {
				assert.Contains(t, out, `<soapenv:Header><wsse:Security `)
				assert.Contains(t, out, `soapenv:mustUnderstand="1"`)
				assert.Contains(t, out, `#X509v3`)
				assert.Contains(t, out, `PrefixList="ns1 xsi"`, "Body needs the prefixes of its QName content")
				assertOrder(t, out, "<wsu:Timestamp", "<wsse:BinarySecurityToken", "<ds:Signature")
			}},
		{name: "ok/soap12-ec-issuer-serial", in: soapEnv(true, 1024, ""), refs: []string{"Body", "Timestamp"},
			o: func(o *Options) { *o = opts(p.ec); o.KeyReference = RefIssuerSerial },
			check: func(t *testing.T, out string) {
				assert.Contains(t, out, `env:mustUnderstand="true"`)
				assert.Contains(t, out, `<ds:X509IssuerName>CN=wssgw Test CA</ds:X509IssuerName>`)
				assert.Contains(t, out, algECDSASHA256)
				assert.NotContains(t, out, "BinarySecurityToken")
			}},
		{name: "ok/ski-extension", in: soapEnv(false, 1024, ""), refs: []string{"Body", "Timestamp"},
			o: func(o *Options) { o.KeyReference = RefSKI },
			check: func(t *testing.T, out string) {
				assert.Contains(t, out, `#X509SubjectKeyIdentifier">AQIDBAUGBwgJCgsMDQ4PEBESE2Q=<`)
			}},
		{name: "ok/ski-computed", in: soapEnv(false, 1024, ""), refs: []string{"Body", "Timestamp"},
			o: func(o *Options) { *o = opts(p.ec); o.KeyReference = RefSKI }},
		{name: "ok/thumbprint-p384", in: soapEnv(true, 1024, ""), refs: []string{"Body", "Timestamp"},
			o: func(o *Options) { *o = opts(p.p384); o.KeyReference = RefThumbprint },
			check: func(t *testing.T, out string) {
				assert.Contains(t, out, valueThumbprint)
				assert.Contains(t, out, algECDSASHA384)
			}},
		{name: "ok/ed25519-sha512", in: soapEnv(false, 1024, ""), refs: []string{"Body", "Timestamp"},
			o:     func(o *Options) { *o = opts(p.ed25519); o.DigestAlgorithm = algSHA512 },
			check: func(t *testing.T, out string) { assert.Contains(t, out, algEd25519) }},
		{name: "ok/encrypt", in: soapEnv(false, 4096, ""), refs: []string{"Body", "Timestamp"},
			o: func(o *Options) { o.EncryptFor = p.server.Cert },
			check: func(t *testing.T, out string) {
				assertOrder(t, out, "<wsu:Timestamp", "<wsse:BinarySecurityToken", "<xenc:EncryptedKey", "<ds:Signature")
				assert.NotContains(t, out, "widget")
				assert.Contains(t, out, `Type="http://www.w3.org/2001/04/xmlenc#Content"`)
			}},
		{name: "ok/encrypt-soap12-ec-thumbprint-recipient-bst", in: soapEnv(true, 4096, wsaTo), refs: []string{"Body", "Timestamp"},
			o: func(o *Options) {
				*o = opts(p.ec)
				o.EncryptFor, o.EncryptKeyReference, o.KeyReference = p.server.Cert, RefBST, RefThumbprint
				o.DataAlgorithm = algAES128GCM
			},
			check: func(t *testing.T, out string) { assert.Equal(t, 1, strings.Count(out, "<wsse:BinarySecurityToken")) }},
		{name: "ok/sign-wsa-header", in: soapEnv(false, 1024, wsaTo), refs: []string{"Body", "Timestamp", "To"},
			o: func(o *Options) { o.SignHeaders = wsa },
			check: func(t *testing.T, out string) {
				assertOrder(t, out, "<soapenv:Header><wsse:Security", "</wsse:Security><wsa:To")
				assert.Contains(t, out, `<wsa:To xmlns:wsa="http://www.w3.org/2005/08/addressing" xmlns:wsu=`)
			}},
		{name: "ok/existing-ids-kept", refs: []string{"Body", "Timestamp", "To"},
			in: []byte(`<S:Envelope xmlns:S="` + nsSOAP11 + `" xmlns:wsu="` + nsWSU + `"><S:Header><To xmlns="http://www.w3.org/2005/08/addressing" wsu:Id="to-1">x</To></S:Header><S:Body wsu:Id="body-1"><a/></S:Body></S:Envelope>`),
			o:  func(o *Options) { o.SignHeaders = wsa },
			check: func(t *testing.T, out string) {
				assert.Contains(t, out, `URI="#body-1"`)
				assert.Contains(t, out, `URI="#to-1"`)
				assert.Equal(t, 2, strings.Count(out, `xmlns:wsu=`), "the Envelope's and the Security header's")
			}},
		{name: "ok/empty-header-empty-body-encrypted", refs: []string{"Body", "Timestamp"},
			in: []byte(`<S:Envelope xmlns:S="` + nsSOAP12 + `"><S:Header/><S:Body/></S:Envelope>`),
			o:  func(o *Options) { o.EncryptFor = p.server.Cert },
			check: func(t *testing.T, out string) {
				assert.Contains(t, out, `<S:Header><wsse:Security`)
				assert.Contains(t, out, `</xenc:EncryptedData></S:Body>`)
			}},
		{name: "ok/default-namespace-envelope", refs: []string{"Body", "Timestamp"},
			in: []byte(`<Envelope xmlns="` + nsSOAP11 + `"><Body><m:Ping xmlns:m="urn:m"/></Body></Envelope>`),
			check: func(t *testing.T, out string) {
				assert.Contains(t, out, `<Envelope xmlns="`+nsSOAP11+`"><Header><wsse:Security`)
				assert.Contains(t, out, `xmlns:soapenv="`+nsSOAP11+`" soapenv:mustUnderstand="1"`)
			}},
		{name: "ok/wsu-prefix-taken", refs: []string{"Body", "Timestamp"},
			in: []byte(`<S:Envelope xmlns:S="` + nsSOAP11 + `" xmlns:wsu="urn:other"><S:Body><wsu:x/></S:Body></S:Envelope>`),
			check: func(t *testing.T, out string) {
				assert.Contains(t, out, `<S:Body xmlns:wsu1="`+nsWSU+`" wsu1:Id="id-`)
			}},
		{name: "ok/no-timestamp-no-prefixes-no-mu", in: soapEnv(false, 1024, ""), refs: []string{"Body"},
			o: func(o *Options) { o.TTL, o.InclusivePrefixes, o.MustUnderstand = -1, false, false },
			check: func(t *testing.T, out string) {
				assert.NotContains(t, out, "Timestamp")
				assert.NotContains(t, out, "InclusiveNamespaces")
				assert.NotContains(t, out, "mustUnderstand")
			}},
		{name: "ok/1MiB-encrypted", in: soapEnv(true, 1<<20, ""), refs: []string{"Body", "Timestamp"},
			o: func(o *Options) { o.EncryptFor = p.server.Cert }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := opts(p.rsa)
			if tc.o != nil {
				tc.o(&o)
			}
			now := time.Date(2030, 1, 2, 3, 4, 5, 678_000_000, time.UTC)
			o.Now = func() time.Time { return now }
			out, err := Secure(tc.in, o)
			require.NoError(t, err)
			var d xmlscan.Document
			require.NoError(t, xmlscan.Scan(out, &d), "output passes the gate")
			res, err := verifySecured(out, o.Certificate, p.server.Key, bodyContent(t, tc.in))
			require.NoError(t, err)
			assert.Equal(t, tc.refs, res.refs)
			assert.Equal(t, o.EncryptFor != nil, res.encrypted)
			if o.TTL >= 0 {
				assert.Contains(t, string(out), `<wsu:Created>2030-01-02T03:04:05.678Z</wsu:Created>`)
			}
			if tc.check != nil {
				tc.check(t, string(out))
			}
		})
	}
}

// assertOrder checks that the substrings occur in this order.
func assertOrder(t *testing.T, s string, parts ...string) {
	t.Helper()
	at := -1
	for _, p := range parts {
		i := strings.Index(s, p)
		if assert.GreaterOrEqual(t, i, 0, "missing %q", p) {
			assert.Greater(t, i, at, "%q out of order", p)
			at = i
		}
	}
}

func TestSecureFail(t *testing.T) {
	p := testPKI(t)
	good := soapEnv(false, 256, "")
	tests := []struct {
		name string
		in   []byte
		o    func(o *Options)
		want error
	}{
		{name: "fail/not-xml", in: []byte("<a>"), want: ErrEnvelope},
		{name: "fail/doctype", in: []byte(`<!DOCTYPE x><S:Envelope xmlns:S="` + nsSOAP11 + `"><S:Body/></S:Envelope>`), want: xmlscan.KindDoctype},
		{name: "fail/not-soap", in: []byte(`<Envelope xmlns="urn:x"><Body/></Envelope>`), want: ErrEnvelope},
		{name: "fail/no-body", in: []byte(`<S:Envelope xmlns:S="` + nsSOAP11 + `"><S:Header/></S:Envelope>`), want: ErrEnvelope},
		{name: "fail/header-after-body", in: []byte(`<S:Envelope xmlns:S="` + nsSOAP11 + `"><S:Body/><S:Header/></S:Envelope>`), want: ErrEnvelope},
		{name: "fail/already-secured", in: soapEnv(false, 256, `<wsse:Security xmlns:wsse="`+nsWSSE+`"/>`), want: ErrSecured},
		{name: "fail/duplicate-id", want: ErrEnvelope,
			in: []byte(`<S:Envelope xmlns:S="` + nsSOAP11 + `" xmlns:wsu="` + nsWSU + `"><S:Body wsu:Id="x"><a wsu:Id="x"/></S:Body></S:Envelope>`)},
		{name: "fail/no-signer", in: good, o: func(o *Options) { o.Signer = nil }, want: ErrOptions},
		{name: "fail/cert-mismatch", in: good, o: func(o *Options) { o.Certificate = p.ec.Cert }, want: ErrKey},
		{name: "fail/unknown-signature-alg", in: good, o: func(o *Options) { o.SignatureAlgorithm = "urn:x" }, want: ErrOptions},
		{name: "fail/alg-key-mismatch", in: good, o: func(o *Options) { o.SignatureAlgorithm = algECDSASHA256 }, want: ErrKey},
		{name: "fail/sha1-digest", in: good, o: func(o *Options) { o.DigestAlgorithm = algSHA1 }, want: ErrOptions},
		{name: "fail/key-reference", in: good, o: func(o *Options) { o.KeyReference = "x509" }, want: ErrOptions},
		{name: "fail/encrypt-for-ec", in: good, o: func(o *Options) { o.EncryptFor = p.ec.Cert }, want: ErrKey},
		{name: "fail/aes-cbc", in: good, o: func(o *Options) {
			o.EncryptFor, o.DataAlgorithm = p.server.Cert, "http://www.w3.org/2001/04/xmlenc#aes256-cbc"
		}, want: ErrOptions},
		{name: "fail/rsa-1_5", in: good, o: func(o *Options) {
			o.EncryptFor, o.KeyTransport = p.server.Cert, "http://www.w3.org/2001/04/xmlenc#rsa-1_5"
		}, want: ErrOptions},
		{name: "fail/rand", in: good, o: func(o *Options) { o.Rand = bytes.NewReader(nil) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := opts(p.rsa)
			if tc.o != nil {
				tc.o(&o)
			}
			out, err := Secure(tc.in, o)
			require.Error(t, err)
			assert.Nil(t, out)
			if tc.want != nil {
				assert.True(t, errors.Is(err, tc.want), "got %v", err)
			}
		})
	}
}

// TestTamper shows that verifySecured (and so TestSecure) can fail: one
// flipped byte in the signed Body, Timestamp or SignatureValue is caught.
func TestTamper(t *testing.T) {
	p := testPKI(t)
	in := soapEnv(false, 1024, "")
	out, err := Secure(in, opts(p.rsa))
	require.NoError(t, err)
	_, err = verifySecured(out, p.rsa.Cert, nil, nil)
	require.NoError(t, err)
	for _, tc := range []struct{ name, after string }{
		{"fail/body", "<ns1:Item n=\""},
		{"fail/timestamp", "<wsu:Created>20"},
		{"fail/signature-value", "<ds:SignatureValue>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := bytes.Clone(out)
			i := bytes.Index(bad, []byte(tc.after))
			require.Positive(t, i)
			bad[i+len(tc.after)]++ // '0'→'1', 'A'→'B': stays well-formed
			_, err := verifySecured(bad, p.rsa.Cert, nil, nil)
			require.Error(t, err)
		})
	}
}
