package template

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/signer"
)

// learnShape learns a message of benchEnvelope's shape with the given item
// tag and returns its template.
func (f *fixture) learnShape(t *testing.T, tag string) *Template {
	t.Helper()
	msg := f.sign(t, exactEnvelope(4, tag), f.rsa, signer.RefBST, f.now, nil)
	_, err := f.engine.Process(msg, f.policy, f.now)
	require.NoError(t, err)
	tpl, _ := f.match(t, msg)
	return tpl
}

// hits reports whether a fresh message of the shape is verified on the
// template path.
func (f *fixture) hits(t *testing.T, tag string) bool {
	t.Helper()
	msg := f.sign(t, exactEnvelope(4, tag), f.rsa, signer.RefBST, f.now, nil)
	res, err := f.engine.Process(msg, f.policy, f.now)
	require.NoError(t, err)
	return res.Lookup == metrics.LookupHit
}

func sameArray(a, b []byte) bool { return len(a) > 0 && len(b) > 0 && &a[0] == &b[0] }

func TestSharedHeader(t *testing.T) {
	t.Run("ok/second-template-aliases-the-header", func(t *testing.T) {
		f := newFixture(t, nil, testOptions())
		a := f.learnShape(t, "Apple")
		b := f.learnShape(t, "Pear")
		require.NotSame(t, a, b)
		// The Security header precedes the payload: b's constants up to
		// the Body are a's bytes, not a copy.
		assert.Contains(t, string(b.lits.c.head), "</soap:Header>")
		assert.True(t, sameArray(b.lits.c.head, a.lits.c.whole()))
		assert.NotZero(t, len(b.lits.c.own), "the payload's markup is b's own")
		sa, sb := a.steps[len(a.steps)-1].sig, b.steps[len(b.steps)-1].sig
		assert.Equal(t, &sa.signedInfo[0], &sb.signedInfo[0], "the SignedInfo's canonical form is shared")
		assert.True(t, f.hits(t, "Apple"))
		assert.True(t, f.hits(t, "Pear"))
	})
	t.Run("ok/sharer-outlives-its-evicted-base", func(t *testing.T) {
		o := testOptions()
		o.MaxTemplates = 2
		f := newFixture(t, nil, o)
		a := f.learnShape(t, "Apple")
		b := f.learnShape(t, "Pear")
		require.True(t, sameArray(b.lits.c.head, a.lits.c.whole()))
		require.True(t, f.hits(t, "Pear")) // Apple is now the coldest
		f.learnShape(t, "Plum")
		f.store.mu.Lock()
		_, held := f.store.byID[a.ID]
		f.store.mu.Unlock()
		require.False(t, held, "evicted")
		assert.True(t, f.hits(t, "Pear"), "the aliased bytes outlive their first template")
		// A mutation in the shared header is still rejected on the
		// template path.
		msg := f.sign(t, exactEnvelope(4, "Pear"), f.rsa, signer.RefBST, f.now, nil)
		i := bytes.Index(msg, []byte("<ds:DigestValue>")) + len("<ds:DigestValue>")
		msg[i] ^= 1
		_, err := f.engine.Process(msg, f.policy, f.now)
		require.Error(t, err)
	})
	t.Run("fail/different-header-is-not-aliased", func(t *testing.T) {
		f := newFixture(t, nil, testOptions())
		a := f.learnShape(t, "Apple")
		msg := f.sign(t, exactEnvelope(4, "Apple"), f.ec, signer.RefBST, f.now, nil)
		_, err := f.engine.Process(msg, f.policy, f.now)
		require.NoError(t, err)
		b, _ := f.match(t, msg)
		require.NotSame(t, a, b)
		// The signature method differs inside the SignedInfo, which is
		// in the header: the head ends before it.
		assert.NotContains(t, string(b.lits.c.head), "sha256\"")
		assert.Contains(t, string(b.lits.c.own), "#ecdsa-sha256\"")
		sa, sb := a.steps[len(a.steps)-1].sig, b.steps[len(b.steps)-1].sig
		assert.NotEqual(t, &sa.signedInfo[0], &sb.signedInfo[0])
		assert.True(t, f.hits(t, "Apple"))
	})
	t.Run("ok/exemplar-rebuilds-the-learned-message", func(t *testing.T) {
		f := newFixture(t, nil, testOptions())
		f.learnShape(t, "Apple")
		msg := f.sign(t, exactEnvelope(4, "Pear"), f.rsa, signer.RefBST, f.now, nil)
		_, err := f.engine.Process(msg, f.policy, f.now)
		require.NoError(t, err)
		b, _ := f.match(t, msg)
		require.NotNil(t, b.exDict, "deflated against the store's dictionary")
		assert.Less(t, len(b.exemplarValues), len(msg)/4)
		assert.Equal(t, string(msg), string(b.exemplarMust(t)))
	})
}

func (t *Template) exemplarMust(tb *testing.T) []byte {
	tb.Helper()
	b, err := t.exemplar()
	require.NoError(tb, err)
	return b
}

// exactEnvelope is benchEnvelope with an id attribute in the payload,
// which keeps the Body out of the generic body slot (generic.go): each tag
// is then a template of its own, as the store and sharing tests need.
func exactEnvelope(items int, tag string) []byte {
	return bytes.Replace(benchEnvelope(items, tag), []byte(`<m:Order `), []byte(`<m:Order Id="keep-exact" `), 1)
}
