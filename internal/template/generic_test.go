package template

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/signer"
)

// payloadEnvelope is envelope's header with body as the Body content.
func payloadEnvelope(body string) []byte {
	return []byte(`<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Header><wsa:To xmlns:wsa="http://www.w3.org/2005/08/addressing">urn:orders</wsa:To></soap:Header><soap:Body>` +
		body + `</soap:Body></soap:Envelope>`)
}

func items(n int, optional bool) string {
	var b strings.Builder
	b.WriteString(`<m:Order xmlns:m="urn:example:orders">`)
	for i := range n {
		fmt.Fprintf(&b, `<m:Item sku="S-%d"><m:Qty>%d</m:Qty>`, i, i+1)
		if optional && i%2 == 0 {
			b.WriteString(`<m:Gift wrap="yes">for &lt;you&gt; &amp; yours</m:Gift>`)
		}
		b.WriteString(`</m:Item>`)
	}
	b.WriteString(`</m:Order>`)
	return b.String()
}

// TestGenericBodyHits: after one message is learned, messages of the same
// partner stack hit its one template whatever their payload: other list
// lengths, optional elements, escaped text, other operations, other
// prefixes, with the DOM engine's facts and forwarded bytes.
func TestGenericBodyHits(t *testing.T) {
	f := newFixture(t, nil, testOptions())
	learn := f.sign(t, payloadEnvelope(items(3, false)), f.rsa, signer.RefBST, f.now, nil)
	res, err := f.engine.Process(learn, f.policy, f.now)
	require.NoError(t, err)
	require.NotEqual(t, metrics.LookupHit, res.Lookup)
	require.Equal(t, 1, f.store.Len())
	gb := f.store.Templates()[0].gbody
	require.NotNil(t, gb, "a generic Body")
	require.NotNil(t, gb.fast, "the fast body reproduced the learned canonical form")
	for name, body := range map[string]string{
		"ok/empty-list":          items(0, false),
		"ok/one-item":            items(1, false),
		"ok/long-list":           items(100, false),
		"ok/optional-elements":   items(7, true),
		"ok/other-operation":     `<c:Cancel xmlns:c="urn:example:cancel"><c:Order>42</c:Order><c:Reason>late</c:Reason></c:Cancel>`,
		"ok/mixed-content":       `<p:Note xmlns:p="urn:p">Hello <p:b>bold</p:b> and &#x41; tail</p:Note>`,
		"ok/default-namespace":   `<Order xmlns="urn:example:orders"><Item sku="1"/></Order>`,
		"ok/text-only":           `just text &amp; more`,
		"ok/white-space":         "\n  " + items(2, true) + "\n",
		"ok/two-children":        items(1, false) + items(2, false),
		"ok/non-ascii":           `<m:N xmlns:m="urn:m">grüße – 日本</m:N>`,
		"ok/attribute-newlines":  `<m:N xmlns:m="urn:m" a="x&#10;y	z"/>`,
		"ok/xml-lang-attribute":  `<m:N xmlns:m="urn:m" xml:lang="de">x</m:N>`,
		"ok/nested-soap-element": `<m:N xmlns:m="urn:m"><soap:Fault><faultcode>x</faultcode></soap:Fault></m:N>`,
	} {
		t.Run(name, func(t *testing.T) {
			msg := f.sign(t, payloadEnvelope(body), f.rsa, signer.RefBST, f.now.Add(time.Second), nil)
			got, gerr := f.engine.Process(msg, f.policy, f.now)
			want, werr := f.dom.Process(msg, f.policy, f.now)
			require.NoError(t, werr)
			require.NoError(t, gerr)
			assert.Equal(t, metrics.LookupHit, got.Lookup)
			assert.Empty(t, Compare(got, gerr, want, werr, f.policy))
			gf, _ := got.Forward(f.policy)
			wf, _ := want.Forward(f.policy)
			assert.Equal(t, string(wf), string(gf), "forwarded bytes")
		})
	}
	assert.Equal(t, 1, f.store.Len(), "one template for every payload")
}

// TestGenericBodyFallsBack: a Body content the DOM engine looks at beyond
// its digest is never decided on the generic template: it is a miss (or no
// hit) with the DOM engine's verdict, and a tampered body is rejected.
func TestGenericBodyFallsBack(t *testing.T) {
	const wsu = `xmlns:wsu="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd"`
	f := newFixture(t, nil, testOptions())
	learn := f.sign(t, payloadEnvelope(items(3, false)), f.rsa, signer.RefBST, f.now, nil)
	_, err := f.engine.Process(learn, f.policy, f.now)
	require.NoError(t, err)
	bodyID := func(msg []byte) string {
		i := bytes.Index(msg, []byte(`<soap:Body`))
		j := bytes.Index(msg[i:], []byte(`Id="`)) + i + 4
		return string(msg[j : j+bytes.IndexByte(msg[j:], '"')])
	}
	cases := map[string]struct {
		body string
		edit func(msg []byte) []byte
	}{
		"fail/wsu-id-in-payload":    {body: `<m:N xmlns:m="urn:m" ` + wsu + ` wsu:Id="p-1">x</m:N>`},
		"fail/plain-id-in-payload":  {body: `<m:N xmlns:m="urn:m" Id="p-1">x</m:N>`},
		"fail/ID-in-payload":        {body: `<m:N xmlns:m="urn:m" ID="p-1">x</m:N>`},
		"fail/xml-id-in-payload":    {body: `<m:N xmlns:m="urn:m" xml:id="p-1">x</m:N>`},
		"fail/signature-in-payload": {body: `<ds:Signature xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:SignedInfo/></ds:Signature>`},
		"fail/encrypted-data":       {body: `<xenc:EncryptedData xmlns:xenc="http://www.w3.org/2001/04/xmlenc#"><xenc:CipherData><xenc:CipherValue>AAAA</xenc:CipherValue></xenc:CipherData></xenc:EncryptedData>`},
		"fail/wsse-element":         {body: `<wsse:Username xmlns:wsse="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd">u</wsse:Username>`},
		"fail/wsu-attribute":        {body: `<m:N xmlns:m="urn:m" ` + wsu + ` wsu:Created="x">x</m:N>`},
		"fail/xop-include":          {body: `<m:N xmlns:m="urn:m"><xop:Include xmlns:xop="http://www.w3.org/2004/08/xop/include" href="cid:a"/></m:N>`},
		"fail/comment":              {body: `<m:N xmlns:m="urn:m"><!-- c -->x</m:N>`},
		"fail/cdata":                {body: `<m:N xmlns:m="urn:m"><![CDATA[<x>]]></m:N>`},
		"fail/duplicate-body-id": {body: `<m:N xmlns:m="urn:m" ` + wsu + ` wsu:Id="DUP">x</m:N>`, edit: func(msg []byte) []byte {
			return bytes.Replace(msg, []byte(`wsu:Id="DUP"`), []byte(`wsu:Id="`+bodyID(msg)+`"`), 1)
		}},
		"fail/tampered-text": {body: items(2, false), edit: func(msg []byte) []byte {
			return bytes.Replace(msg, []byte(`<m:Qty>2</m:Qty>`), []byte(`<m:Qty>9</m:Qty>`), 1)
		}},
		"fail/tampered-extra-item": {body: items(2, false), edit: func(msg []byte) []byte {
			return bytes.Replace(msg, []byte(`</m:Order>`), []byte(`<m:Item sku="X"/></m:Order>`), 1)
		}},
		"fail/malformed": {body: items(2, false), edit: func(msg []byte) []byte {
			return bytes.Replace(msg, []byte(`</m:Qty>`), []byte(`</m:Qtx>`), 1)
		}},
		"fail/body-close-in-payload": {body: items(1, false), edit: func(msg []byte) []byte {
			return bytes.Replace(msg, []byte(`</m:Order>`), []byte(`</m:Order></soap:Body><soap:Body>`), 1)
		}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			msg := f.sign(t, payloadEnvelope(c.body), f.rsa, signer.RefBST, f.now.Add(time.Second), nil)
			if c.edit != nil {
				msg = c.edit(msg)
			}
			got, gerr := f.engine.Process(msg, f.policy, f.now)
			want, werr := f.dom.Process(msg, f.policy, f.now)
			assert.Empty(t, Compare(got, gerr, want, werr, f.policy))
			if werr == nil {
				assert.NotEqual(t, metrics.LookupHit, got.Lookup, "decided on the generic template")
			} else {
				assert.Error(t, gerr)
			}
		})
	}
}

// TestGenericBodyShadowsFirstHits: the first hits of a generic template
// are re-verified by the DOM engine whatever the shadow rate.
func TestGenericBodyShadowsFirstHits(t *testing.T) {
	m := metrics.New(metrics.BuildInfo{Version: "test"})
	f := newFixture(t, nil, testOptions())
	f.store.metrics = m.Templates(f.policy.Name)
	for k := range genericShadowHits + 3 {
		msg := f.sign(t, payloadEnvelope(items(k, k%2 == 0)), f.rsa, signer.RefBST, f.now.Add(time.Duration(k)*time.Second), nil)
		_, err := f.engine.Process(msg, f.policy, f.now)
		require.NoError(t, err)
	}
	got := map[string]float64{}
	fams, err := m.Registry().Gather()
	require.NoError(t, err)
	for _, fam := range fams {
		if fam.GetName() != metrics.NameShadowChecks {
			continue
		}
		for _, mm := range fam.GetMetric() {
			for _, l := range mm.GetLabel() {
				if l.GetName() == "result" {
					got[l.GetValue()] = mm.GetCounter().GetValue()
				}
			}
		}
	}
	assert.Equal(t, map[string]float64{metrics.ShadowAgree: genericShadowHits, metrics.ShadowDisagree: 0, metrics.ShadowSkipped: 0}, got)
}
