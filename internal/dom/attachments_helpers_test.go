package dom

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/c14n"
	"github.com/wssgw/wssgw/internal/config"
	wcrypto "github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/reload"
	"github.com/wssgw/wssgw/internal/testmime"
	"github.com/wssgw/wssgw/internal/testpki"
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

const (
	tsNS   = `xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns:wsu="` + nsWSU + `"`
	xopNS  = `xmlns:xop="` + nsXOP + `"`
	algRSA = wcrypto.AlgRSASHA256
	algSHA = wcrypto.AlgDigestSHA256
)

// attFixture signs and encrypts packages by hand: a trusted RSA signer, an
// RSA recipient whose key the policy decrypts with.
type attFixture struct {
	e          *Engine
	signer     *testpki.Leaf
	recipient  *testpki.Leaf
	ca         string
	now        time.Time
	requireSig bool
}

func newAttFixture(t testing.TB) *attFixture {
	t.Helper()
	dir := t.TempDir()
	ca := testpki.NewCA(t, "att CA")
	f := &attFixture{e: newEngine(t), signer: ca.IssueRSA(t, dir, "client"), recipient: ca.IssueRSA(t, dir, "server"),
		ca: ca.WriteCert(t, dir), now: time.Now().UTC(), requireSig: true}
	return f
}

// policy requires a trusted signature over the Body (so every attachment
// must be signed) unless requireSig is off.
func (f *attFixture) policy(t testing.TB) *wss.Policy {
	t.Helper()
	p := config.DefaultPolicy()
	p.Replay = "off"
	p.Require = nil
	p.SignedParts = nil
	if f.requireSig {
		p.Require = []string{config.RequireSignature}
		p.SignedParts = []string{config.PartBody}
	}
	p.Trust.CAFiles = []string{f.ca}
	p.DecryptionKeys = []config.KeyFiles{{CertFile: f.recipient.CertFile, KeyFile: f.recipient.KeyFile}}
	cp, err := wss.Compile("att", p, nil, reload.Options{})
	require.NoError(t, err)
	return cp
}

func envelope(security, body string) string {
	return `<soap:Envelope ` + tsNS + `><soap:Header>` + security + `</soap:Header>` +
		`<soap:Body wsu:Id="Body">` + body + `</soap:Body></soap:Envelope>`
}

// ref is one Reference to sign: "#Body" (digest computed over the Body of
// the XOP infoset form) or a cid: URI with a transform and its digest.
type ref struct {
	uri, transform string
	digest         []byte
}

// bodyDigest is the exc-c14n SHA-256 of the Body whose content is body.
func bodyDigest(t testing.TB, body string) []byte {
	t.Helper()
	var d xmlscan.Document
	require.NoError(t, xmlscan.Scan([]byte(envelope("", body)), &d))
	h := sha256.New()
	require.NoError(t, c14n.CanonicalizeTo(h, c14n.AlgExcC14N, &d, 2, nil))
	require.Equal(t, "Body", d.Elements[2].Local)
	return h.Sum(nil)
}

// signed returns the message: Security header holding before, the signer's
// token and a Signature over refs, then after; Body content body.
func (f *attFixture) signed(t testing.TB, before, after, body string, refs []ref) []byte {
	t.Helper()
	var si strings.Builder
	si.WriteString(`<ds:SignedInfo><ds:CanonicalizationMethod Algorithm="` + c14n.AlgExcC14N + `"></ds:CanonicalizationMethod>` +
		`<ds:SignatureMethod Algorithm="` + algRSA + `"></ds:SignatureMethod>`)
	for _, r := range refs {
		si.WriteString(`<ds:Reference URI="` + r.uri + `"><ds:Transforms><ds:Transform Algorithm="` + r.transform + `"></ds:Transform></ds:Transforms>` +
			`<ds:DigestMethod Algorithm="` + algSHA + `"></ds:DigestMethod><ds:DigestValue>` + base64.StdEncoding.EncodeToString(r.digest) + `</ds:DigestValue></ds:Reference>`)
	}
	si.WriteString(`</ds:SignedInfo>`)
	bst := `<wsse:BinarySecurityToken wsu:Id="X509" ValueType="` + vtX509v3 + `" EncodingType="` + encBase64 + `">` +
		base64.StdEncoding.EncodeToString(f.signer.Cert.Raw) + `</wsse:BinarySecurityToken>`
	sig := `<ds:Signature xmlns:ds="` + nsDS + `">` + si.String() + `<ds:SignatureValue>SIG</ds:SignatureValue><ds:KeyInfo>` +
		`<wsse:SecurityTokenReference><wsse:Reference URI="#X509" ValueType="` + vtX509v3 + `"></wsse:Reference></wsse:SecurityTokenReference></ds:KeyInfo></ds:Signature>`
	sec := `<wsse:Security xmlns:wsse="` + nsWSSE + `">` + before + bst + sig + after + `</wsse:Security>`
	msg := envelope(sec, body)
	var d xmlscan.Document
	require.NoError(t, xmlscan.Scan([]byte(msg), &d))
	sie := -1
	for i := range d.Elements {
		if d.Elements[i].Local == "SignedInfo" {
			sie = i
		}
	}
	canon, err := c14n.Canonicalize(c14n.AlgExcC14N, &d, sie, nil, nil)
	require.NoError(t, err)
	sum := sha256.Sum256(canon)
	sv, err := f.signer.Key.(*rsa.PrivateKey).Sign(rand.Reader, sum[:], crypto.SHA256)
	require.NoError(t, err)
	return []byte(strings.Replace(msg, ">SIG<", ">"+base64.StdEncoding.EncodeToString(sv)+"<", 1))
}

// encryptedAttachment encrypts data under a fresh AES key for the
// recipient: the EncryptedKey and EncryptedData for the header, and the
// ciphertext part content.
func (f *attFixture) encryptedAttachment(t testing.TB, cid, typ, mimeType string, plain []byte) (string, []byte) {
	t.Helper()
	key := make([]byte, 16)
	_, _ = rand.Read(key)
	ek, err := wcrypto.EncryptKey(wcrypto.AlgRSAOAEPMGF1P, "", "", f.recipient.Cert.PublicKey.(*rsa.PublicKey), key)
	require.NoError(t, err)
	ct, err := wcrypto.EncryptData(wcrypto.AlgAES128GCM, key, plain, nil)
	require.NoError(t, err)
	x := `xmlns:xenc="` + nsXEnc + `"`
	hdr := `<xenc:EncryptedKey ` + x + ` Id="EK"><xenc:EncryptionMethod Algorithm="` + wcrypto.AlgRSAOAEPMGF1P + `"></xenc:EncryptionMethod>` +
		`<xenc:CipherData><xenc:CipherValue>` + base64.StdEncoding.EncodeToString(ek) + `</xenc:CipherValue></xenc:CipherData>` +
		`<xenc:ReferenceList><xenc:DataReference URI="#ED"></xenc:DataReference></xenc:ReferenceList></xenc:EncryptedKey>` +
		`<xenc:EncryptedData ` + x + ` Id="ED" MimeType="` + mimeType + `" Type="` + typ + `">` +
		`<xenc:EncryptionMethod Algorithm="` + wcrypto.AlgAES128GCM + `"></xenc:EncryptionMethod><xenc:CipherData>` +
		`<xenc:CipherReference URI="cid:` + cid + `"><xenc:Transforms><ds:Transform xmlns:ds="` + nsDS + `" Algorithm="` + trSwACiphertext + `"></ds:Transform>` +
		`</xenc:Transforms></xenc:CipherReference></xenc:CipherData></xenc:EncryptedData>`
	return hdr, ct
}

func sha(b []byte) []byte { s := sha256.Sum256(b); return s[:] }

// verify runs the package through the engine and the policy check.
func (f *attFixture) verify(t testing.TB, msg []byte, atts *testmime.Parts) (*wss.Result, error) {
	t.Helper()
	var a wss.Attachments
	if atts != nil {
		a = atts
	}
	res, _, err := f.policy(t).VerifyAttachments(t.Context(), f.e, msg, a, f.now)
	return res, err
}
