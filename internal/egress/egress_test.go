package egress

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime/multipart"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/budget"
	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/dom"
	"github.com/wssgw/wssgw/internal/mime"
	"github.com/wssgw/wssgw/internal/reload"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/testmime"
	"github.com/wssgw/wssgw/internal/testpki"
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

const (
	request = `<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>` +
		`<m:GetQuote xmlns:m="urn:quotes"><m:Symbol>ACME</m:Symbol></m:GetQuote></soap:Body></soap:Envelope>`
	answer = `<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>` +
		`<m:Quote xmlns:m="urn:quotes"><m:Price>42.17</m:Price></m:Quote></soap:Body></soap:Envelope>`
	fault12 = `<env:Envelope xmlns:env="http://www.w3.org/2003/05/soap-envelope"><env:Body><env:Fault>` +
		`<env:Code><env:Value>env:Receiver</env:Value></env:Code><env:Reason><env:Text xml:lang="en">no such symbol</env:Text></env:Reason>` +
		`</env:Fault></env:Body></env:Envelope>`
	fault = `<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>` +
		`<soap:Fault><faultcode>soap:Server</faultcode><faultstring>no such symbol</faultstring></soap:Fault></soap:Body></soap:Envelope>`
)

// pki is the cast: wssgw signs requests with gw (RSA, so partners can
// encrypt for it), the partner answers with partner; stranger has its
// own CA, which wssgw does not trust.
type pki struct {
	dir                   string
	caFile                string
	gw, partner, stranger *testpki.Leaf
}

func newPKI(t testing.TB) *pki {
	t.Helper()
	dir := t.TempDir()
	ca := testpki.NewCA(t, "egress CA")
	other := testpki.NewCA(t, "other CA")
	return &pki{
		dir: dir, caFile: ca.WriteCert(t, dir),
		gw: ca.IssueRSA(t, dir, "wssgw"), partner: ca.IssueRSA(t, dir, "partner"),
		stranger: other.IssueRSA(t, dir, "stranger"),
	}
}

// responsePolicy is what wssgw requires of the partner: a signed Body and
// Timestamp by a certificate of the test CA; wssgw's key decrypts.
func (p *pki) responsePolicy(t testing.TB) *wss.Policy {
	t.Helper()
	cp := config.DefaultPolicy()
	cp.Replay = "off"
	cp.Trust.CAFiles = []string{p.caFile}
	cp.DecryptionKeys = []config.KeyFiles{{CertFile: p.gw.CertFile, KeyFile: p.gw.KeyFile}}
	pol, err := wss.Compile("partner-responses", cp, nil, reload.Options{})
	require.NoError(t, err)
	return pol
}

func (p *pki) client(t testing.TB, edit func(*config.Egress)) *Client {
	t.Helper()
	e := config.DefaultEgress()
	e.Sign.CertFile, e.Sign.KeyFile = p.gw.CertFile, p.gw.KeyFile
	if edit != nil {
		edit(&e)
	}
	lim := Limits{Request: xmlscan.DefaultConfig(), Response: xmlscan.DefaultConfig(), MIME: mime.DefaultLimits()}
	lim.MIME.SpoolDir = t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	c, err := New(ctx, "partner-b", e, p.responsePolicy(t), lim, reload.Options{})
	require.NoError(t, err)
	return c
}

// partnerVerifies checks a secured request the way the partner (a wssgw
// ingress route) would: trust in the test CA, the partner's key decrypts,
// wssgw's certificate known for references without a BST.
func (p *pki) partnerVerifies(t *testing.T, msg []byte) (*wss.Result, []byte, error) {
	t.Helper()
	cp := config.DefaultPolicy()
	cp.Replay = "off"
	cp.Trust.CAFiles = []string{p.caFile}
	cp.Trust.KnownCertFiles = []string{p.gw.CertFile}
	cp.DecryptionKeys = []config.KeyFiles{{CertFile: p.partner.CertFile, KeyFile: p.partner.KeyFile}}
	pol, err := wss.Compile("partner", cp, nil, reload.Options{})
	require.NoError(t, err)
	e, err := dom.New(xmlscan.DefaultConfig())
	require.NoError(t, err)
	return pol.Verify(context.Background(), e, msg, time.Now())
}

func TestSecure(t *testing.T) {
	p := newPKI(t)
	tests := []struct {
		name    string
		edit    func(*config.Egress)
		in      string
		encrypt bool
		want    error
	}{
		{name: "ok/bst"},
		{name: "ok/issuer-serial", edit: func(e *config.Egress) { e.Sign.KeyReference = config.KeyRefIssuerSerial }},
		{name: "ok/ski", edit: func(e *config.Egress) { e.Sign.KeyReference = config.KeyRefSKI }},
		{name: "ok/thumbprint", edit: func(e *config.Egress) { e.Sign.KeyReference = config.KeyRefThumbprint }},
		{name: "ok/x509v3", edit: func(e *config.Egress) { e.Sign.KeyReference = config.KeyRefX509v3 }},
		{name: "ok/rsa-sha512", edit: func(e *config.Egress) {
			e.Sign.SignatureAlgorithm = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512"
			e.Sign.DigestAlgorithm = "http://www.w3.org/2001/04/xmlenc#sha512"
		}},
		{name: "ok/encrypt-aes128-gcm", encrypt: true, edit: func(e *config.Egress) {
			e.Encrypt.PartnerCertFile = p.partner.CertFile
			e.Encrypt.DataEncryption = "http://www.w3.org/2009/xmlenc11#aes128-gcm"
		}},
		{name: "ok/encrypt-xenc11-rsa-oaep", encrypt: true, edit: func(e *config.Egress) {
			e.Encrypt.PartnerCertFile = p.partner.CertFile
			e.Encrypt.KeyTransport = "http://www.w3.org/2009/xmlenc11#rsa-oaep"
			e.Encrypt.KeyReference = config.KeyRefX509v3
		}},
		{name: "ok/encrypt", encrypt: true, edit: func(e *config.Egress) { e.Encrypt.PartnerCertFile = p.partner.CertFile }},
		{name: "fail/not-xml", in: "<soap:Envelope", want: ErrRequest},
		{name: "fail/doctype", in: `<!DOCTYPE x [<!ENTITY e "x">]>` + request, want: ErrRequest},
		{name: "fail/not-soap", in: `<a/>`, want: ErrRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := p.client(t, tc.edit)
			in := tc.in
			if in == "" {
				in = request
			}
			req, err := c.Secure([]byte(in))
			if tc.want != nil {
				require.ErrorIs(t, err, tc.want)
				return
			}
			require.NoError(t, err)
			assert.NotEmpty(t, req.SignatureValue)
			assert.Equal(t, tc.encrypt, bytes.Contains(req.Body, []byte("EncryptedData")))
			assert.Equal(t, tc.encrypt, !bytes.Contains(req.Body, []byte("ACME")), "the Body is encrypted for the partner")
			res, plain, err := p.partnerVerifies(t, req.Body)
			require.NoError(t, err, "the partner verifies the request")
			require.NotNil(t, res.Timestamp, "a Timestamp is added")
			assert.Contains(t, string(plain), "<m:Symbol>ACME</m:Symbol>")
			require.Len(t, res.Signatures, 1)
			assert.Equal(t, req.SignatureValue, res.Signatures[0].SignatureValue, "the value SignatureConfirmation must echo")
		})
	}
}

func TestSecureWithoutTimestamp(t *testing.T) {
	p := newPKI(t)
	c := p.client(t, func(e *config.Egress) { e.Sign.Parts = []string{config.PartBody} })
	req, err := c.Secure([]byte(request))
	require.NoError(t, err)
	assert.NotContains(t, string(req.Body), "Timestamp", "Timestamp is added only when listed in sign.parts")
}

// respond secures a response as the partner's stack does.
func (p *pki) respond(t *testing.T, env string, by *testpki.Leaf, edit func(*signer.Options)) []byte {
	t.Helper()
	o := signer.DefaultOptions()
	o.Signer, o.Certificate = by.Key, by.Cert
	if edit != nil {
		edit(&o)
	}
	out, err := signer.Secure([]byte(env), o)
	require.NoError(t, err)
	return out
}

func TestVerify(t *testing.T) {
	p := newPKI(t)
	c := p.client(t, nil)
	confirming := p.client(t, func(e *config.Egress) { e.Response.RequireSignatureConfirmation = true })
	rejectFaults := p.client(t, func(e *config.Egress) { e.Response.UnsignedFaults = config.FaultsReject })
	req, err := c.Secure([]byte(request))
	require.NoError(t, err)
	signed := p.respond(t, answer, p.partner, nil)

	tests := []struct {
		name      string
		c         *Client
		body      []byte
		fault     bool
		unsigned  bool
		reason    string // a RejectedError's reason; "" for success
		wantPlain string
	}{
		{name: "ok/signed", body: signed, wantPlain: "<m:Price>42.17</m:Price>"},
		{name: "ok/signed-encrypted", body: p.respond(t, answer, p.partner, func(o *signer.Options) { o.EncryptFor = p.gw.Cert }), wantPlain: "<m:Price>42.17</m:Price>"},
		{name: "ok/confirmation", c: confirming, body: p.respond(t, answer, p.partner, func(o *signer.Options) {
			o.SignatureConfirmation, o.Confirm = true, [][]byte{req.SignatureValue}
		}), wantPlain: "<m:Price>42.17</m:Price>"},
		{name: "ok/signed-fault", body: p.respond(t, fault, p.partner, nil), fault: true, wantPlain: "no such symbol"},
		{name: "ok/unsigned-fault-passed", body: []byte(fault), fault: true, unsigned: true, wantPlain: "no such symbol"},
		{name: "ok/unsigned-fault-soap12", body: []byte(fault12), fault: true, unsigned: true, wantPlain: "no such symbol"},
		{name: "ok/signed-fault-soap12", body: p.respond(t, fault12, p.partner, nil), fault: true, wantPlain: "no such symbol"},
		// Only a Fault of the envelope's namespace is a fault: anything else
		// unsigned is an unsigned answer.
		{name: "fail/fault-in-other-namespace", body: []byte(strings.NewReplacer("<soap:Fault>", `<m:Fault xmlns:m="urn:x">`, "</soap:Fault>", "</m:Fault>").Replace(fault)), reason: "missing"},
		{name: "fail/unsigned-fault-rejected", c: rejectFaults, body: []byte(fault), reason: ReasonUnsignedFault},
		{name: "fail/unsigned", body: []byte(answer), reason: "missing"},
		{name: "fail/tampered", body: bytes.Replace(signed, []byte("42.17"), []byte("0.01"), 1), reason: "digest"},
		{name: "fail/untrusted-signer", body: p.respond(t, answer, p.stranger, nil), reason: "untrusted"},
		{name: "fail/tampered-fault", body: bytes.Replace(p.respond(t, fault, p.partner, nil), []byte("no such"), []byte("an evil"), 1), reason: "digest"},
		{name: "fail/confirmation-missing", c: confirming, body: signed, reason: ReasonConfirmation},
		{name: "fail/confirmation-wrong", c: confirming, body: p.respond(t, answer, p.partner, func(o *signer.Options) {
			o.SignatureConfirmation, o.Confirm = true, [][]byte{[]byte("another request's value")}
		}), reason: ReasonConfirmation},
		{name: "fail/not-xml", body: []byte("<html>502 Bad Gateway</html"), reason: "malformed"},
		{name: "fail/expired", body: p.respond(t, answer, p.partner, func(o *signer.Options) {
			o.Now = func() time.Time { return time.Now().Add(-time.Hour) }
		}), reason: "timestamp"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cl := tc.c
			if cl == nil {
				cl = c
			}
			// A buffer of its own, as the gateway hands over: Verify cuts
			// the plaintext out of it in place (signed is used twice).
			v, err := cl.Verify(context.Background(), req, bytes.Clone(tc.body), time.Now())
			if tc.reason != "" {
				var rej *RejectedError
				require.True(t, errors.As(err, &rej), "want a RejectedError, got %v", err)
				assert.Equal(t, tc.reason, rej.Reason, "%v", err)
				assert.Nil(t, v)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.fault, v.Fault)
			assert.Equal(t, tc.unsigned, v.Unsigned)
			assert.Contains(t, string(v.Plaintext), tc.wantPlain)
			if !tc.unsigned {
				assert.NotContains(t, string(v.Plaintext), "Security", "the Security header is removed")
				// Cut in place, the plaintext is what the copying path makes.
				_, want, err := cl.policy.Verify(context.Background(), cl.engine, bytes.Clone(tc.body), time.Now())
				require.NoError(t, err)
				assert.Equal(t, string(want), string(v.Plaintext))
			}
		})
	}
}

// streamed is the partner's wssgw streaming the signature of an MTOM
// response as its last part (seed 001), encrypted for wssgw in the strict
// variant; tamper may change the signed bytes on the way.
func (p *pki) streamed(t *testing.T, payload string, by *testpki.Leaf, strict bool, tamper func([]byte) []byte) *mime.Package {
	t.Helper()
	in, boundary := testmime.File(t, payload)
	o := signer.StreamOptions{Options: signer.DefaultOptions()}
	o.Signer, o.Certificate = by.Key, by.Cert
	if strict {
		o.StrictXOP, o.EncryptFor = true, p.gw.Cert
	}
	s, err := signer.NewStream(o)
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, s.Sign(&out, &testmime.RawParts{R: multipart.NewReader(in, boundary)}))
	msg := out.Bytes()
	if tamper != nil {
		msg = tamper(msg)
	}
	ct := testmime.ContentType(s.Boundary())
	lim := mime.DefaultLimits()
	lim.SpoolThreshold = 1 << 10 // the attachment goes to disk
	lim.SpoolDir = t.TempDir()
	pkg, err := mime.Read(context.Background(), bytes.NewReader(msg), ct, lim)
	require.NoError(t, err)
	t.Cleanup(func() { pkg.Close() })
	return pkg
}

func TestVerifyPackage(t *testing.T) {
	p := newPKI(t)
	c := p.client(t, nil)
	req, err := c.Secure([]byte(request))
	require.NoError(t, err)
	payload := strings.Repeat("\x00\x01binary payload ", 1000)
	tests := []struct {
		name   string
		pkg    *mime.Package
		reason string
	}{
		{name: "ok/streamed", pkg: p.streamed(t, payload, p.partner, false, nil)},
		{name: "ok/streamed-strict", pkg: p.streamed(t, payload, p.partner, true, nil)},
		{name: "fail/attachment-tampered", pkg: p.streamed(t, payload, p.partner, false, func(b []byte) []byte {
			return bytes.Replace(b, []byte("binary payload"), []byte("BINARY payload"), 1)
		}), reason: "digest"},
		{name: "fail/untrusted", pkg: p.streamed(t, payload, p.stranger, false, nil), reason: "untrusted"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := len(tc.pkg.Attachments)
			v, err := c.VerifyPackage(context.Background(), req, tc.pkg, time.Now())
			if tc.reason != "" {
				var rej *RejectedError
				require.True(t, errors.As(err, &rej), "want a RejectedError, got %v", err)
				assert.Equal(t, tc.reason, rej.Reason, "%v", err)
				return
			}
			require.NoError(t, err)
			assert.NotContains(t, string(v.Plaintext), "Security")
			assert.Contains(t, string(v.Plaintext), `href="cid:file@x"`, "the client gets the include and its part")
			require.Len(t, tc.pkg.Attachments, n-1, "the part that carried the signature is dropped")
			part := tc.pkg.Attachments[0]
			assert.Equal(t, "file@x", part.ContentID())
			rc, err := part.Open()
			require.NoError(t, err)
			got, _ := io.ReadAll(rc)
			rc.Close()
			assert.Equal(t, payload, string(got))
		})
	}
}

// refusing is a DOM-engine worker pool that is always full.
type refusing struct{}

func (refusing) Acquire(int64) (func(), error) {
	return nil, &budget.OverloadError{Reason: budget.ReasonQueue, RetryAfter: time.Second}
}

func (r refusing) TryAcquire(n int64) (func(), error) { return r.Acquire(n) }

// TestVerifyOverloaded: without a free DOM worker there is no verdict on
// the response: the budget's error, never a RejectedError, so that the
// client gets a 503 to retry rather than the 502 of a bad partner.
func TestVerifyOverloaded(t *testing.T) {
	p := newPKI(t)
	c := p.client(t, nil)
	c.LimitWorkers(refusing{})
	req, err := c.Secure([]byte(request))
	require.NoError(t, err)
	_, err = c.Verify(context.Background(), req, p.respond(t, answer, p.partner, nil), time.Now())
	var over *budget.OverloadError
	require.ErrorAs(t, err, &over)
	var rej *RejectedError
	assert.False(t, errors.As(err, &rej))
}
