package dom

import (
	"bytes"
	"encoding/base64"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/reload"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/testpki"
	"github.com/wssgw/wssgw/internal/wss"
)

// confFixture signs responses with SignatureConfirmation as wssgw's
// responder does, for a policy that trusts the signer.
type confFixture struct {
	e      *Engine
	p      *wss.Policy
	leaf   *testpki.Leaf
	client *testpki.Leaf // the requester, to encrypt for
}

func newConfFixture(t testing.TB) *confFixture {
	t.Helper()
	dir := t.TempDir()
	ca := testpki.NewCA(t, "Confirm CA")
	f := &confFixture{e: newEngine(t), leaf: ca.IssueRSA(t, dir, "server"), client: ca.IssueRSA(t, dir, "client")}
	pc := config.DefaultPolicy()
	pc.Replay = "off"
	pc.Trust.CAFiles = []string{ca.WriteCert(t, dir)}
	pc.DecryptionKeys = []config.KeyFiles{{CertFile: f.client.CertFile, KeyFile: f.client.KeyFile}}
	p, err := wss.Compile("confirm", pc, nil, reload.Options{})
	require.NoError(t, err)
	f.p = p
	return f
}

const confEnvelope = `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body>` +
	`<r:Answer xmlns:r="urn:confirm">42</r:Answer></soapenv:Body></soapenv:Envelope>`

// sign secures confEnvelope confirming values (none: one confirmation
// without Value).
func (f *confFixture) sign(t testing.TB, encrypt bool, values ...[]byte) []byte {
	t.Helper()
	o := signer.DefaultOptions()
	o.Signer, o.Certificate = f.leaf.Key, f.leaf.Cert
	o.SignatureConfirmation, o.Confirm = true, values
	if encrypt {
		o.EncryptFor = f.client.Cert
	}
	out, err := signer.Secure([]byte(confEnvelope), o)
	require.NoError(t, err)
	return out
}

// injectFirst puts extra as the first child of the Security header: processed
// before anything else there, and covered by no signature.
func injectFirst(t testing.TB, msg []byte, extra string) []byte {
	t.Helper()
	i := bytes.Index(msg, []byte("<wsse:Security"))
	require.GreaterOrEqual(t, i, 0)
	j := bytes.IndexByte(msg[i:], '>')
	require.GreaterOrEqual(t, j, 0)
	at := i + j + 1
	return append(append(append([]byte{}, msg[:at]...), extra...), msg[at:]...)
}

const scOpen = `<wsse11:SignatureConfirmation xmlns:wsse11="http://docs.oasis-open.org/wss/oasis-wss-wssecurity-secext-1.1.xsd"`

// TestSignatureConfirmation: the engine accepts wsse11:SignatureConfirmation
// in the Security header and reports each Value as sent, and whether a
// trusted signature covers them; an unsigned one is reported, not trusted.
func TestSignatureConfirmation(t *testing.T) {
	f := newConfFixture(t)
	v1, v2 := bytes.Repeat([]byte{0xA5}, 256), []byte("second signature value")
	b1, b2 := base64.StdEncoding.EncodeToString(v1), base64.StdEncoding.EncodeToString(v2)
	tests := []struct {
		name   string
		msg    []byte
		want   []string
		signed bool
	}{
		{name: "ok/confirmation recorded", msg: f.sign(t, false, v1), want: []string{b1}, signed: true},
		{name: "ok/two confirmations in order", msg: f.sign(t, false, v1, v2), want: []string{b1, b2}, signed: true},
		{name: "ok/no value for an unsigned request", msg: f.sign(t, false), want: []string{""}, signed: true},
		{name: "ok/body encrypted for the requester", msg: f.sign(t, true, v1), want: []string{b1}, signed: true},
		{name: "ok/unsigned confirmation is reported, not trusted",
			msg: injectFirst(t, f.sign(t, false, v1), scOpen+` Value="`+b2+`"/>`), want: []string{b2, b1}},
		{name: "ok/empty value reads as no signature",
			msg: injectFirst(t, f.sign(t, false, v1), scOpen+` Value=""/>`), want: []string{"", b1}},
		{name: "ok/foreign attribute allowed",
			msg: injectFirst(t, f.sign(t, false, v1), scOpen+` xmlns:x="urn:x" x:note="n" Value="`+b2+`"/>`), want: []string{b2, b1}},
		{name: "ok/whitespace content", msg: injectFirst(t, f.sign(t, false, v1), scOpen+"> \n</wsse11:SignatureConfirmation>"),
			want: []string{"", b1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := f.e.Process(tt.msg, f.p, time.Now())
			require.NoError(t, err)
			assert.Equal(t, tt.want, res.Confirmations)
			require.Len(t, res.ConfirmationStarts, len(tt.want))
			for _, s := range res.ConfirmationStarts {
				assert.True(t, bytes.HasPrefix(res.Document[s:], []byte("<wsse11:SignatureConfirmation")),
					"offset %d names %.40q", s, res.Document[s:])
			}
			assert.Equal(t, tt.signed, res.ConfirmationsSignedByTrusted())
		})
	}

	t.Run("ok/no confirmation", func(t *testing.T) {
		o := signer.DefaultOptions()
		o.Signer, o.Certificate = f.leaf.Key, f.leaf.Cert
		msg, err := signer.Secure([]byte(confEnvelope), o)
		require.NoError(t, err)
		res, err := f.e.Process(msg, f.p, time.Now())
		require.NoError(t, err)
		assert.Empty(t, res.Confirmations)
		assert.False(t, res.ConfirmationsSignedByTrusted(), "no confirmation is not a signed one")
	})
}

// TestSignatureConfirmationMalformed attacks the element: a second value
// one reader would take and another skip, content, unknown attributes,
// and values that are not base64.
func TestSignatureConfirmationMalformed(t *testing.T) {
	f := newConfFixture(t)
	good := f.sign(t, false, []byte("request signature"))
	tests := []struct {
		name  string
		extra string
		want  wss.Reason
	}{
		// Duplicate attributes are not well-formed: the gate refuses.
		{"fail/two Value attributes", scOpen + ` Value="QUJD" Value="REVG"/>`, wss.ReasonMalformed},
		{"fail/wsse11-qualified second Value", scOpen + ` Value="QUJD" wsse11:Value="REVG"/>`, wss.ReasonStructure},
		{"fail/child element", scOpen + ` Value="QUJD"><ds:SignatureValue xmlns:ds="http://www.w3.org/2000/09/xmldsig#">REVG</ds:SignatureValue></wsse11:SignatureConfirmation>`, wss.ReasonStructure},
		{"fail/text content", scOpen + `>REVG</wsse11:SignatureConfirmation>`, wss.ReasonStructure},
		// The gate refuses comments anywhere in the Security header.
		{"fail/comment content", scOpen + ` Value="QUJD"><!--x--></wsse11:SignatureConfirmation>`, wss.ReasonMalformed},
		{"fail/unknown unqualified attribute", scOpen + ` Value="QUJD" Type="x"/>`, wss.ReasonStructure},
		{"fail/unqualified Id", scOpen + ` Id="sc-x" Value="QUJD"/>`, wss.ReasonStructure},
		{"fail/value not base64", scOpen + ` Value="not*base64"/>`, wss.ReasonMalformed},
		{"fail/value only spaces", scOpen + ` Value="   "/>`, wss.ReasonMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.e.Process(injectFirst(t, good, tt.extra), f.p, time.Now())
			require.Error(t, err)
			assert.Equal(t, tt.want, reasonOf(err), "%v", err)
		})
	}

	t.Run("fail/signed confirmation changed", func(t *testing.T) {
		msg := bytes.Replace(good, []byte(`Value="`), []byte(`Value="AAAA`), 1)
		require.NotEqual(t, good, msg)
		_, err := f.e.Process(msg, f.p, time.Now())
		require.Error(t, err)
		assert.Equal(t, wss.ReasonDigest, reasonOf(err), "%v", err)
	})
}

// FuzzSignatureConfirmation puts a fuzzed SignatureConfirmation first in a
// signed response's Security header. Oracles: every failure is a
// *wss.Error of the closed set; an accepted message reports one more
// confirmation than the signer wrote, whose value is "" or base64 and is
// not covered by the signature.
func FuzzSignatureConfirmation(f *testing.F) {
	fx := newConfFixture(f)
	good := fx.sign(f, false, []byte("request signature"))
	for _, s := range []string{` Value="QUJD"/>`, `/>`, ` Value=""/>`, `>x</wsse11:SignatureConfirmation>`,
		` wsse11:Value="QUJD"/>`, ` xmlns:x="urn:x" x:a="1" Value="QU JD"/>`} {
		f.Add(s)
	}
	now := time.Now()
	f.Fuzz(func(t *testing.T, rest string) {
		res, err := fx.e.Process(injectFirst(t, good, scOpen+rest), fx.p, now)
		if err != nil {
			if reasonOf(err) == 0 {
				t.Fatalf("error outside the closed set: %v", err)
			}
			return
		}
		if len(res.Confirmations) != 2 || len(res.ConfirmationStarts) != 2 {
			// The fuzzed bytes may have closed the element and added
			// siblings; only an accepted message with our two matters.
			return
		}
		if v := res.Confirmations[0]; v != "" {
			if _, err := wss.DecodeBase64(v); err != nil {
				t.Fatalf("accepted a Value that is not base64: %q", v)
			}
		}
		if res.ConfirmationsSignedByTrusted() {
			t.Fatal("an injected confirmation counted as signed")
		}
	})
}

func BenchmarkSignatureConfirmation(b *testing.B) {
	f := newConfFixture(b)
	msg := f.sign(b, false, bytes.Repeat([]byte{1}, 256), bytes.Repeat([]byte{2}, 256))
	now := time.Now()
	b.ReportAllocs()
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		if _, err := f.e.Process(msg, f.p, now); err != nil {
			b.Fatal(err)
		}
	}
}
