package template

import (
	"encoding/xml"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/dom"
	"github.com/wssgw/wssgw/internal/reload"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/testpki"
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// fixture is a policy, both engines and a signer for making messages.
type fixture struct {
	policy *wss.Policy
	dom    *dom.Engine
	engine *Engine
	store  *Store
	rsa    *testpki.Leaf
	ec     *testpki.Leaf
	gw     *testpki.Leaf // the gateway's decryption key pair
	ca     *testpki.CA
	now    time.Time
}

func newFixture(t testing.TB, mutate func(*config.Policy), o Options) *fixture {
	t.Helper()
	dir := t.TempDir()
	ca := testpki.NewCA(t, "template test CA")
	f := &fixture{rsa: ca.IssueRSA(t, dir, "partner-rsa"), ec: ca.Issue(t, dir, "partner-ec"), gw: ca.IssueRSA(t, dir, "gateway"),
		ca: ca, now: time.Now().UTC().Truncate(time.Second)}
	p := config.DefaultPolicy()
	p.DecryptionKeys = []config.KeyFiles{{CertFile: f.gw.CertFile, KeyFile: f.gw.KeyFile}}
	p.Replay = "off"
	p.Trust.CAFiles = []string{ca.WriteCert(t, dir)}
	p.Trust.KnownCertFiles = []string{f.rsa.CertFile, f.ec.CertFile}
	if mutate != nil {
		mutate(&p)
	}
	var err error
	f.policy, err = wss.Compile("test", p, nil, reload.Options{})
	require.NoError(t, err)
	f.dom, err = dom.New(xmlscan.DefaultConfig())
	require.NoError(t, err)
	f.store = NewStore(f.policy, o, nil)
	f.engine, err = New(f.dom, xmlscan.DefaultConfig(), f.store, nil)
	require.NoError(t, err)
	return f
}

// testOptions learn without a rate limit, at first sight, and never
// shadow, so that tests see the template path's own verdicts and a shape's
// second message hits; the bounds are the config's defaults. Learning at
// the second sight (templates.learnAfter's default) is attacked in
// sighting_test.go.
func testOptions() Options {
	return Options{MaxTemplates: 1000, MaxBytes: 64 << 20, LearnPerSecond: 1e9, LearnBurst: 1e9, LearnAfter: 1}
}

// envelope is a SOAP envelope with n payload items, ids and attributes.
func envelope(v12 bool, n int, text string) []byte {
	ns := "http://schemas.xmlsoap.org/soap/envelope/"
	if v12 {
		ns = "http://www.w3.org/2003/05/soap-envelope"
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<soap:Envelope xmlns:soap="%s"><soap:Header><wsa:To xmlns:wsa="http://www.w3.org/2005/08/addressing">urn:orders</wsa:To></soap:Header><soap:Body><m:Order xmlns:m="urn:example:orders" m:ref="%s">`, ns, "r-1")
	for i := range n {
		fmt.Fprintf(&b, `<m:Item sku="S-%d" qty="%d"><m:Note>%s %d</m:Note></m:Item>`, i, i+1, text, i)
	}
	b.WriteString(`</m:Order></soap:Body></soap:Envelope>`)
	return []byte(b.String())
}

// sign secures an envelope with the given key reference.
func (f *fixture) sign(t testing.TB, env []byte, leaf *testpki.Leaf, ref string, at time.Time, mod func(*signer.Options)) []byte {
	t.Helper()
	o := signer.Options{Signer: leaf.Key, Certificate: leaf.Cert, KeyReference: ref, Now: func() time.Time { return at },
		SignHeaders: []xml.Name{{Space: "http://www.w3.org/2005/08/addressing", Local: "To"}}}
	if mod != nil {
		mod(&o)
	}
	out, err := signer.Secure(env, o)
	require.NoError(t, err)
	return out
}

// encrypt is a sign option: the Body content encrypted for the gateway
// after signing, with the given key reference for its EncryptedKey.
func (f *fixture) encrypt(ref string) func(*signer.Options) {
	return func(o *signer.Options) { o.EncryptFor, o.EncryptKeyReference = f.gw.Cert, ref }
}
