package signer

import (
	"bytes"
	"encoding/base64"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/xmlscan"
)

const (
	fault11 = `<soapenv:Envelope xmlns:soapenv="` + nsSOAP11 + `"><soapenv:Body><soapenv:Fault>` +
		`<faultcode>soapenv:Server</faultcode><faultstring>out of widgets</faultstring></soapenv:Fault></soapenv:Body></soapenv:Envelope>`
	fault12 = `<env:Envelope xmlns:env="` + nsSOAP12 + `"><env:Body><env:Fault><env:Code><env:Value>env:Receiver</env:Value></env:Code>` +
		`<env:Reason><env:Text xml:lang="en">out of widgets</env:Text></env:Reason></env:Fault></env:Body></env:Envelope>`
)

// TestResponseVerifiesWithDOM: a buffered response (plain result or SOAP
// fault) secured by Secure is accepted by the repo's reference engine, and
// the plaintext it forwards is the backend's Body.
func TestResponseVerifiesWithDOM(t *testing.T) {
	p := testPKI(t)
	v := newDOMVerifier(t, p)
	now := time.Now()
	tests := []struct {
		name string
		in   []byte
		o    func(o *Options)
	}{
		{name: "ok/soap11-rsa", in: soapEnv(false, 2048, "")},
		{name: "ok/soap12-ec-issuer-serial", in: soapEnv(true, 2048, ""), o: func(o *Options) { *o = opts(p.ec); o.KeyReference = RefIssuerSerial }},
		{name: "ok/fault11", in: []byte(fault11)},
		{name: "ok/fault12-thumbprint", in: []byte(fault12), o: func(o *Options) { o.KeyReference = RefThumbprint }},
		{name: "ok/encrypted-for-requester", in: soapEnv(false, 4096, ""), o: func(o *Options) { o.EncryptFor = p.server.Cert }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := opts(p.rsa)
			if tc.o != nil {
				tc.o(&o)
			}
			out, err := Secure(tc.in, o)
			require.NoError(t, err)
			res, plain, err := v.verify(out, now)
			require.NoError(t, err)
			require.Len(t, res.Signatures, 1)
			assert.Equal(t, o.Certificate.Raw, res.Signatures[0].Signer.Certificate.Raw)
			assert.True(t, res.SignedByTrusted(res.Body), "Body signed")
			assert.True(t, res.SignedByTrusted(res.Timestamp.Start), "Timestamp signed")
			assert.Equal(t, o.EncryptFor != nil, res.DecryptedAt(res.Body), "Body decrypted with the requester's key")
			assert.Contains(t, string(plain), string(bodyContent(t, tc.in)))
		})
	}
}

// TestResponseTamper: one flipped byte anywhere that matters is caught by
// the DOM engine.
func TestResponseTamper(t *testing.T) {
	p := testPKI(t)
	v := newDOMVerifier(t, p)
	out, err := Secure([]byte(fault11), opts(p.rsa))
	require.NoError(t, err)
	_, _, err = v.verify(out, time.Now())
	require.NoError(t, err)
	for _, tc := range []struct{ name, after string }{
		{"fail/fault-string", "<faultstring>"},
		{"fail/timestamp", "<wsu:Expires>20"},
		{"fail/digest", "<ds:DigestValue>"},
		{"fail/signature-value", "<ds:SignatureValue>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := bytes.Clone(out)
			i := bytes.Index(bad, []byte(tc.after))
			require.Positive(t, i)
			bad[i+len(tc.after)] ^= 1 // 'o'→'n', '2'→'3', base64 stays base64
			_, _, err := v.verify(bad, time.Now())
			require.Error(t, err)
		})
	}
}

var confValue = regexp.MustCompile(`<wsse11:SignatureConfirmation [^>]*?(?:Value="([^"]*)")?></wsse11:SignatureConfirmation>`)

// TestSignatureConfirmation: the response confirms exactly the request's
// SignatureValue (WSS 1.1 §8.5), the confirmation is signed, and changing
// its Value breaks the signature.
func TestSignatureConfirmation(t *testing.T) {
	p := testPKI(t)
	req, err := Secure(soapEnv(false, 512, ""), opts(p.ec))
	require.NoError(t, err)
	reqSig := signatureValue(t, req)

	tests := []struct {
		name    string
		confirm [][]byte
		want    []string // Value attributes, "" for none
	}{
		{name: "ok/one", confirm: [][]byte{reqSig}, want: []string{base64.StdEncoding.EncodeToString(reqSig)}},
		{name: "ok/two", confirm: [][]byte{reqSig, {1, 2, 3}}, want: []string{base64.StdEncoding.EncodeToString(reqSig), "AQID"}},
		{name: "ok/unsigned-request", want: []string{""}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := opts(p.rsa)
			o.SignatureConfirmation, o.Confirm = true, tc.confirm
			out, err := Secure([]byte(fault12), o)
			require.NoError(t, err)
			var got []string
			for _, m := range confValue.FindAllStringSubmatch(string(out), -1) {
				got = append(got, m[1])
			}
			assert.Equal(t, tc.want, got)
			res, err := verifySecured(out, p.rsa.Cert, nil, nil)
			require.NoError(t, err)
			wantRefs := []string{"Body", "Timestamp"}
			for range tc.want {
				wantRefs = append(wantRefs, "SignatureConfirmation")
			}
			assert.Equal(t, wantRefs, res.refs, "every confirmation is signed")
			assertOrder(t, string(out), "<wsu:Timestamp", "<wsse11:SignatureConfirmation", "<wsse:BinarySecurityToken", "<ds:Signature")
			if tc.confirm == nil {
				return
			}
			bad := bytes.Replace(out, []byte(`Value="`), []byte(`Value="B`), 1)
			_, err = verifySecured(bad, p.rsa.Cert, nil, nil)
			require.Error(t, err, "a changed confirmation breaks the signature")
		})
	}
}

// signatureValue returns the decoded ds:SignatureValue of a message.
func signatureValue(t testing.TB, msg []byte) []byte {
	t.Helper()
	var d xmlscan.Document
	require.NoError(t, xmlscan.Scan(msg, &d))
	sv := find(&d, nsDS, "SignatureValue")
	require.GreaterOrEqual(t, sv, 0)
	v, err := b64(string(d.Text(sv, nil)))
	require.NoError(t, err)
	return v
}
