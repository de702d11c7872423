package template

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/signer"
)

// traceEnvelope is envelope with one extra header block whose element name
// is tag: what makes every fresh-shape message a new shape (testtraffic
// Fresh).
func traceEnvelope(tag string, items int) []byte {
	return bytes.Replace(envelope(false, items, "a"), []byte(`<soap:Header>`),
		fmt.Appendf(nil, `<soap:Header><t:%s xmlns:t="urn:trace">1</t:%s>`, tag, tag), 1)
}

func TestShapeKey(t *testing.T) {
	base := []byte(`<s:Envelope xmlns:s="urn:s"><s:Header><h:A xmlns:h="urn:h" h:id="x1">v</h:A></s:Header><s:Body Id="b"><m:Op xmlns:m="urn:m"><m:I/></m:Op></s:Body></s:Envelope>`)
	key := shapeKey(base, false)
	for _, tc := range []struct {
		name  string
		msg   string
		pkg   bool
		same  bool
		other string // compared with msg instead of base
	}{
		{name: "ok/same", msg: string(base), same: true},
		{name: "ok/other-values", msg: `<s:Envelope xmlns:s="urn:s"><s:Header><h:A xmlns:h="urn:h" h:id="y2">w</h:A></s:Header><s:Body Id="c"><m:Op xmlns:m="urn:m"><m:I/></m:Op></s:Body></s:Envelope>`, same: true},
		{name: "ok/other-payload", msg: `<s:Envelope xmlns:s="urn:s"><s:Header><h:A xmlns:h="urn:h" h:id="x1">v</h:A></s:Header><s:Body Id="b"><m:Other xmlns:m="urn:m" a="1"><m:I/><m:J><!-- c --><![CDATA[<x>]]></m:J></m:Other></s:Body></s:Envelope>`, same: true},
		{name: "ok/quoted-markup", msg: `<s:Envelope xmlns:s="urn:s"><s:Header><h:A xmlns:h="urn:h" h:id="x>1/">v</h:A></s:Header><s:Body Id="b"><m:Op xmlns:m="urn:m"><m:I/></m:Op></s:Body></s:Envelope>`, same: true},
		{name: "ok/body-in-payload", msg: `<s:Envelope xmlns:s="urn:s"><s:Header><h:A xmlns:h="urn:h" h:id="x1">v</h:A></s:Header><s:Body Id="b"><m:Op xmlns:m="urn:m"><s:Body>x</s:Body><s:Header/></m:Op></s:Body></s:Envelope>`, same: true},
		{name: "ok/other-id-value", msg: `<s:Envelope xmlns:s="urn:s"><s:Header><h:A xmlns:h="urn:h" h:id="x1">v</h:A></s:Header><s:Body Id="b-2"><m:Op xmlns:m="urn:m"><m:I/></m:Op></s:Body></s:Envelope>`, same: true},
		{name: "fail/package", msg: string(base), pkg: true},
		{name: "fail/namespace", msg: `<s:Envelope xmlns:s="urn:s"><s:Header><h:A xmlns:h="urn:h2" h:id="x1">v</h:A></s:Header><s:Body Id="b"><m:Op xmlns:m="urn:m"><m:I/></m:Op></s:Body></s:Envelope>`},
		{name: "fail/value-type", msg: `<s:Envelope xmlns:s="urn:s"><s:Header><h:A xmlns:h="urn:h" h:id="x1" ValueType="#Thumbprint">v</h:A></s:Header><s:Body Id="b"><m:Op xmlns:m="urn:m"><m:I/></m:Op></s:Body></s:Envelope>`, other: `<s:Envelope xmlns:s="urn:s"><s:Header><h:A xmlns:h="urn:h" h:id="x1" ValueType="#SKI">v</h:A></s:Header><s:Body Id="b"><m:Op xmlns:m="urn:m"><m:I/></m:Op></s:Body></s:Envelope>`},
		{name: "fail/algorithm", msg: `<s:Envelope xmlns:s="urn:s"><s:Header><h:A xmlns:h="urn:h" h:id="x1"><h:D Algorithm='sha256'/></h:A></s:Header><s:Body Id="b"><m:Op xmlns:m="urn:m"><m:I/></m:Op></s:Body></s:Envelope>`, other: `<s:Envelope xmlns:s="urn:s"><s:Header><h:A xmlns:h="urn:h" h:id="x1"><h:D Algorithm="sha512"/></h:A></s:Header><s:Body Id="b"><m:Op xmlns:m="urn:m"><m:I/></m:Op></s:Body></s:Envelope>`},
		{name: "fail/extra-header", msg: `<s:Envelope xmlns:s="urn:s"><s:Header><h:A xmlns:h="urn:h" h:id="x1">v</h:A><h:B xmlns:h="urn:h"/></s:Header><s:Body Id="b"><m:Op xmlns:m="urn:m"><m:I/></m:Op></s:Body></s:Envelope>`},
		{name: "fail/attribute-name", msg: `<s:Envelope xmlns:s="urn:s"><s:Header><h:A xmlns:h="urn:h" h:ID="x1">v</h:A></s:Header><s:Body Id="b"><m:Op xmlns:m="urn:m"><m:I/></m:Op></s:Body></s:Envelope>`},
		{name: "fail/prefix", msg: `<s:Envelope xmlns:s="urn:s"><s:Header><g:A xmlns:g="urn:h" g:id="x1">v</g:A></s:Header><s:Body Id="b"><m:Op xmlns:m="urn:m"><m:I/></m:Op></s:Body></s:Envelope>`},
		{name: "fail/nesting", msg: `<s:Envelope xmlns:s="urn:s"><s:Header><h:A xmlns:h="urn:h" h:id="x1"><s:Body/></h:A></s:Header><s:Body Id="b"><m:Op xmlns:m="urn:m"><m:I/></m:Op></s:Body></s:Envelope>`},
		{name: "fail/body-attribute", msg: `<s:Envelope xmlns:s="urn:s"><s:Header><h:A xmlns:h="urn:h" h:id="x1">v</h:A></s:Header><s:Body wsu:Id="b"><m:Op xmlns:m="urn:m"><m:I/></m:Op></s:Body></s:Envelope>`},
		{name: "fail/after-body", msg: `<s:Envelope xmlns:s="urn:s"><s:Header><h:A xmlns:h="urn:h" h:id="x1">v</h:A></s:Header><s:Body Id="b"><m:Op xmlns:m="urn:m"><m:I/></m:Op></s:Body><s:X/></s:Envelope>`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, key := shapeKey([]byte(tc.msg), tc.pkg), key
			if tc.other != "" {
				key = shapeKey([]byte(tc.other), false)
			}
			if tc.same {
				assert.Equal(t, key, got)
			} else {
				assert.NotEqual(t, key, got)
			}
		})
	}
}

// learnAfterFixture is a fixture with templates.learnAfter's default and
// the skip counts observed.
func learnAfterFixture(t *testing.T) (*fixture, *metrics.Metrics) {
	o := testOptions()
	o.LearnAfter = 2
	f := newFixture(t, nil, o)
	m := metrics.New(metrics.BuildInfo{})
	f.store.metrics = m.Templates("test")
	return f, m
}

// skippedSeries is the series of skipped learning for reason.
func skippedSeries(reason string) string {
	return fmt.Sprintf(`wssgw_template_learn_skipped_total{policy="test",reason=%q}`, reason)
}

func metricText(t *testing.T, m *metrics.Metrics, name string) string {
	t.Helper()
	out, err := testutil.CollectAndFormat(m.Registry(), expfmt.TypeTextPlain, name)
	require.NoError(t, err)
	return string(out)
}

func TestLearnAfter(t *testing.T) {
	t.Run("ok/one-off-flood-learns-nothing", func(t *testing.T) {
		f, m := learnAfterFixture(t)
		const n = 20
		for i := range n {
			msg := f.sign(t, traceEnvelope(fmt.Sprintf("Trace%d", i), 2), f.rsa, signer.RefBST, f.now, nil)
			res, err := f.engine.Process(msg, f.policy, f.now)
			require.NoError(t, err, "a shape not learned is still verified by the DOM engine")
			assert.NotEqual(t, metrics.LookupHit, res.Lookup)
		}
		assert.Equal(t, 0, f.store.Len(), "no one-off shape is learned")
		assert.Contains(t, metricText(t, m, metrics.NameTemplatesSkipped), fmt.Sprintf("%s %d", skippedSeries(metrics.SkipFirstSight), n))
	})
	t.Run("ok/second-sight-learns", func(t *testing.T) {
		f, m := learnAfterFixture(t)
		// Different payloads of one envelope shape: one key.
		for i, want := range []string{metrics.LookupNoTemplate, metrics.LookupNoTemplate, metrics.LookupHit, metrics.LookupHit} {
			msg := f.sign(t, envelope(false, 1+i, fmt.Sprintf("p%d", i)), f.rsa, signer.RefBST, f.now, nil)
			res, err := f.engine.Process(msg, f.policy, f.now)
			require.NoError(t, err)
			assert.Equal(t, want, res.Lookup, "message %d", i)
		}
		assert.Equal(t, 1, f.store.Len())
		assert.Contains(t, metricText(t, m, metrics.NameTemplatesSkipped), skippedSeries(metrics.SkipFirstSight)+" 1")
	})
	t.Run("fail/rejected-messages-do-not-count", func(t *testing.T) {
		// Only messages the DOM engine accepts are sightings: a sender
		// without the key cannot prime a shape for learning.
		f, _ := learnAfterFixture(t)
		msg := f.sign(t, envelope(false, 2, "a"), f.rsa, signer.RefBST, f.now, nil)
		bad := bytes.Replace(msg, []byte("a 0"), []byte("b 0"), 1)
		require.NotEqual(t, msg, bad)
		_, err := f.engine.Process(bad, f.policy, f.now)
		require.Error(t, err)
		_, err = f.engine.Process(msg, f.policy, f.now)
		require.NoError(t, err)
		assert.Equal(t, 0, f.store.Len(), "the accepted message is the shape's first sight")
	})
}

// TestLearnAfterCollision: every message has the same key (the worst
// collision), so the second accepted message teaches its own shape though
// the first was another. The template learned decides by its own checks:
// the first shape does not hit it, and a tampered message of the learned
// shape is rejected.
func TestLearnAfterCollision(t *testing.T) {
	f, _ := learnAfterFixture(t)
	first := f.sign(t, traceEnvelope("One", 2), f.rsa, signer.RefBST, f.now, nil)
	second := f.sign(t, traceEnvelope("Two", 2), f.rsa, signer.RefBST, f.now, nil)
	f.store.seen.see(shapeKey(second, false), 2) // as if first had second's key
	_, err := f.engine.Process(second, f.policy, f.now)
	require.NoError(t, err)
	require.Equal(t, 1, f.store.Len(), "learned at the (colliding) second sight")

	res, err := f.engine.Process(first, f.policy, f.now)
	require.NoError(t, err)
	assert.NotEqual(t, metrics.LookupHit, res.Lookup, "another shape never hits the template")

	again := f.sign(t, traceEnvelope("Two", 3), f.rsa, signer.RefBST, f.now, nil)
	res, err = f.engine.Process(again, f.policy, f.now)
	require.NoError(t, err)
	require.Equal(t, metrics.LookupHit, res.Lookup)
	bad := bytes.Replace(again, []byte("a 0"), []byte("b 0"), 1)
	require.NotEqual(t, again, bad)
	res, err = f.engine.Process(bad, f.policy, f.now)
	require.Error(t, err, "the template's digest check decides")
	assert.Equal(t, metrics.LookupHit, res.Lookup, "rejected on the template path")
}

func TestSightingsBounded(t *testing.T) {
	var s sightings
	held := func() int { return len(s.cur) + len(s.old) }
	require.True(t, s.see(1, 1), "learnAfter 1: always")
	assert.Equal(t, 0, held(), "and nothing held")
	assert.False(t, s.see(7, 2))
	for k := range uint64(sightingsMax / 4) {
		assert.False(t, s.see(1000+k, 2))
	}
	assert.True(t, s.see(7, 2), "seen again within sightingsMax/2 other keys")
	for k := range uint64(20 * sightingsMax) {
		s.see(1<<32+k, 2)
		if held() > sightingsMax {
			t.Fatalf("%d keys held after %d distinct ones, bound %d", held(), k+1, sightingsMax)
		}
	}
	assert.False(t, s.see(7, 2), "pushed out by the flood: a first sight again")
	assert.False(t, s.see(8, 3))
	assert.False(t, s.see(8, 3))
	assert.True(t, s.see(8, 3), "learnAfter 3: the third sight")
}

// BenchmarkShapeKey: what a message of a new shape pays for its key,
// against ~3 ms for learning it (BenchmarkLearn). The walk now runs on
// every miss before the DOM engine and also finds the claimed signer
// (first-sight lanes): "walk" is that, "before" the key alone as it was
// computed after acceptance only (shapeKeyBefore), in one run.
func BenchmarkShapeKey(b *testing.B) {
	f := newFixture(b, nil, testOptions())
	msg := f.sign(b, envelope(false, 40, "text"), f.rsa, signer.RefBST, f.now, nil)
	b.Run("before", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(msg)))
		for b.Loop() {
			shapeKeyBefore(msg, false)
		}
	})
	b.Run("walk", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(msg)))
		for b.Loop() {
			walkShape(msg, false)
		}
	})
}

// FuzzShapeKey: the walk runs before the DOM engine on whatever a sender
// wrote (first-sight lanes), so on any input it never panics, stays
// deterministic and is linear (TestLaneWalkLinear has the inputs that were
// not); a message's key and claimed signer do not depend on its Body
// content; and on a well-formed message with one Body the key is the one
// the walk computed when it ran after acceptance only (shapeKeyBefore), so
// learning is unchanged.
func FuzzShapeKey(f *testing.F) {
	f.Add([]byte(`<s:Envelope xmlns:s="urn:s"><s:Header><h:A xmlns:h="urn:h" h:id="x1" ValueType="v">v</h:A></s:Header><s:Body Id="b"><m:Op/></s:Body></s:Envelope>`), []byte(`<m:Op a="1"><!-- c --></m:Op>`))
	f.Add([]byte(`<a b='`), []byte(`<![CDATA[`))
	f.Add([]byte(`<?x?><!DOCTYPE a><a/`), []byte(`"`))
	f.Add([]byte(secEnvelope("", bst("X-1", certA)+sigWith(`<wsse:Reference URI="#X-1"/>`), "<m:Op/>")), []byte(bst("X-1", certB)))
	f.Add([]byte(secEnvelope("", sigWith(`<wsse:KeyIdentifier ValueType="#ThumbprintSHA1">3q2+&#13;7w==</wsse:KeyIdentifier>`), "")), []byte(`<wsse:Security>`))
	f.Add([]byte(`<s:Envelope></s:Body><s:Envelope><s:Body></x><s:Body></x>`), []byte(`</s:Body>`))
	f.Fuzz(func(t *testing.T, msg, payload []byte) {
		pkg := len(msg)%2 == 0
		k, s := walkShape(msg, pkg)
		if k2, s2 := walkShape(bytes.Clone(msg), pkg); k != k2 || s != s2 {
			t.Fatal("not deterministic")
		}
		if k != shapeKey(msg, pkg) {
			t.Fatal("walkShape and shapeKey differ")
		}
		if oneBody(msg) && k != shapeKeyBefore(msg, pkg) {
			t.Fatalf("the key of well-formed %q changed", msg)
		}
		env := `<s:Envelope xmlns:s="urn:s"><s:Header><wsse:Security><wsse:BinarySecurityToken wsu:Id="X-1">` + certA + `</wsse:BinarySecurityToken></wsse:Security></s:Header><s:Body>%s</s:Body></s:Envelope>`
		if bytes.Contains(payload, []byte("</s:Body")) {
			return
		}
		k1, s1 := walkShape(fmt.Appendf(nil, env, payload), false)
		k2, s2 := walkShape(fmt.Appendf(nil, env, "<m:Op/>"), false)
		if k1 != k2 {
			t.Fatalf("the key depends on the payload %q", payload)
		}
		if s1 != s2 || s1 == 0 {
			t.Fatalf("the claimed signer depends on the payload %q", payload)
		}
	})
}

// oneBody reports whether msg is well-formed XML with at most one element
// named Body, which a SOAP message is: where the old walk jumped more
// than once or past a long name, the new one scans, and keys may differ
// only on such messages, never accepted.
func oneBody(msg []byte) bool {
	if bytes.Count(msg, []byte("Body")) > 2 {
		return false
	}
	d := xml.NewDecoder(bytes.NewReader(msg))
	bodies := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return bodies <= 1
		}
		if err != nil {
			return false
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "Body" {
			bodies++
		}
	}
}
