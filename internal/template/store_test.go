package template

import (
	"fmt"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/wss"
)

// shapes returns n signed messages of n different shapes.
func (f *fixture) shapes(t testing.TB, n int) [][]byte {
	var out [][]byte
	for i := range n {
		out = append(out, f.sign(t, exactEnvelope(2, fmt.Sprintf("Shape%d", i)), f.rsa, signer.RefBST, f.now, nil))
	}
	return out
}

func TestStoreBounds(t *testing.T) {
	t.Run("ok/evicts-the-coldest", func(t *testing.T) {
		o := testOptions()
		o.MaxTemplates = 3
		f := newFixture(t, nil, o)
		msgs := f.shapes(t, 4)
		for _, m := range msgs[:3] {
			_, err := f.engine.Process(m, f.policy, f.now)
			require.NoError(t, err)
		}
		// Shapes 1 and 2 are used again; shape 0 is the coldest.
		for _, m := range msgs[1:3] {
			res, err := f.engine.Process(m, f.policy, f.now)
			require.NoError(t, err)
			require.Equal(t, metrics.LookupHit, res.Lookup)
		}
		_, err := f.engine.Process(msgs[3], f.policy, f.now)
		require.NoError(t, err)
		assert.Equal(t, 3, f.store.Len())
		res, err := f.engine.Process(msgs[0], f.policy, f.now)
		require.NoError(t, err)
		assert.NotEqual(t, metrics.LookupHit, res.Lookup, "shape 0 was evicted")
		res, err = f.engine.Process(msgs[3], f.policy, f.now)
		require.NoError(t, err)
		assert.Equal(t, metrics.LookupHit, res.Lookup)
	})
	t.Run("fail/learning-rate", func(t *testing.T) {
		o := testOptions()
		o.LearnPerSecond, o.LearnBurst = 0.001, 2
		f := newFixture(t, nil, o)
		for _, m := range f.shapes(t, 5) {
			res, err := f.engine.Process(m, f.policy, f.now)
			require.NoError(t, err, "a shape not learned is still verified by the DOM engine")
			assert.NotEqual(t, metrics.LookupHit, res.Lookup)
		}
		assert.Equal(t, 2, f.store.Len(), "only the burst was learned")
	})
	t.Run("fail/bytes", func(t *testing.T) {
		o := testOptions()
		o.MaxBytes = 100
		f := newFixture(t, nil, o)
		_, err := f.engine.Process(f.shapes(t, 1)[0], f.policy, f.now)
		require.NoError(t, err)
		assert.Zero(t, f.store.Len(), "a template above maxBytes is not kept")
	})
	t.Run("ok/within-max-message-bytes", func(t *testing.T) {
		o := testOptions()
		o.MaxMessageBytes = 64 << 10
		f := newFixture(t, nil, o)
		m := f.shapes(t, 1)[0]
		for range 2 {
			_, err := f.engine.Process(m, f.policy, f.now)
			require.NoError(t, err)
		}
		assert.Equal(t, 1, f.store.Len())
	})
	t.Run("fail/over-max-message-bytes", func(t *testing.T) {
		o := testOptions()
		o.MaxMessageBytes = 100
		f := newFixture(t, nil, o)
		m := f.shapes(t, 1)[0]
		for range 2 {
			res, err := f.engine.Process(m, f.policy, f.now)
			require.NoError(t, err, "a large message is still verified, by the DOM engine")
			assert.Equal(t, metrics.LookupDisabled, res.Lookup)
		}
		assert.Zero(t, f.store.Len(), "a message over maxMessageBytes is not learned")
	})
}

// TestConcurrentLearnAndMatch runs matching and learning at once (run it
// with -race): matching never waits for learning and sees consistent
// automata.
func TestConcurrentLearnAndMatch(t *testing.T) {
	f := newFixture(t, nil, testOptions())
	msgs := f.shapes(t, 8)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 40 {
				m := msgs[(w+k)%len(msgs)]
				if _, err := f.engine.Process(m, f.policy, f.now); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, len(msgs), f.store.Len())
}

// TestShadowCheck: a template whose program went wrong (here: a corrupted
// covered-element anchor) gives facts the DOM engine does not; the shadow
// check rejects the message and counts the disagreement.
func TestShadowCheck(t *testing.T) {
	o := testOptions()
	o.ShadowRate = 1
	m := metrics.New(metrics.BuildInfo{})
	f := newFixture(t, nil, o)
	f.store.metrics = m.Templates("test")
	first := f.sign(t, envelope(false, 2, "a"), f.rsa, signer.RefBST, f.now, nil)
	_, err := f.engine.Process(first, f.policy, f.now)
	require.NoError(t, err)
	msg := f.sign(t, envelope(false, 2, "b"), f.rsa, signer.RefBST, f.now, nil)
	res, err := f.engine.Process(msg, f.policy, f.now)
	require.NoError(t, err, "agreeing engines")
	require.Equal(t, metrics.LookupHit, res.Lookup)

	for _, tpl := range f.store.Templates() {
		for _, s := range tpl.steps {
			if s.sig != nil {
				s.sig.refs[0].target.delta++
			}
		}
	}
	msg = f.sign(t, envelope(false, 2, "c"), f.rsa, signer.RefBST, f.now, nil)
	_, err = f.engine.Process(msg, f.policy, f.now)
	require.Error(t, err)
	assert.Equal(t, wss.ReasonShadow, reasonOf(err))
	body, gerr := testutil.GatherAndCount(m.Registry(), metrics.NameShadowChecks)
	require.NoError(t, gerr)
	assert.Equal(t, len(metrics.ShadowResults()), body, "every result's series exists")
	assert.Contains(t, gatherText(t, m), `wssgw_template_shadow_checks_total{policy="test",result="skipped"} 0`, "a free DOM worker: nothing skipped")
	assert.Contains(t, gatherText(t, m), `wssgw_template_shadow_checks_total{policy="test",result="disagree"} 1`)
	assert.Contains(t, gatherText(t, m), `wssgw_template_shadow_checks_total{policy="test",result="agree"} 1`)
}

func gatherText(t *testing.T, m *metrics.Metrics) string {
	out, err := testutil.CollectAndFormat(m.Registry(), expfmt.TypeTextPlain, metrics.NameShadowChecks)
	require.NoError(t, err)
	return string(out)
}

// TestRelearnReplacesStaleTemplate: a template whose looked-up signer came
// from a trust store that has since been reloaded sends its shape to the
// DOM engine, which teaches it again; the next message hits.
func TestRelearnReplacesStaleTemplate(t *testing.T) {
	f := newFixture(t, nil, testOptions())
	first := f.sign(t, envelope(false, 2, "a"), f.rsa, signer.RefSKI, f.now, nil)
	_, err := f.engine.Process(first, f.policy, f.now)
	require.NoError(t, err)
	for _, tpl := range f.store.Templates() {
		for _, s := range tpl.steps {
			if s.sig != nil {
				s.sig.trust = nil // as if learned under an older trust store
			}
		}
	}
	res, err := f.engine.Process(f.sign(t, envelope(false, 2, "b"), f.rsa, signer.RefSKI, f.now, nil), f.policy, f.now)
	require.NoError(t, err)
	assert.Equal(t, metrics.LookupRejected, res.Lookup, "a stale template defers to the DOM engine")
	res, err = f.engine.Process(f.sign(t, envelope(false, 2, "c"), f.rsa, signer.RefSKI, f.now, nil), f.policy, f.now)
	require.NoError(t, err)
	assert.Equal(t, metrics.LookupHit, res.Lookup, "the shape was learned again")
	assert.Equal(t, 1, f.store.Len())
}
