package template

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/testpki"
)

// TestSecondMessageHits: the first message of a shape is learned, the
// next of the same shape (new ids, digests, signature, timestamp, payload
// values) is verified on the template path with the DOM engine's facts.
func TestSecondMessageHits(t *testing.T) {
	f := newFixture(t, nil, testOptions())
	type keyCase struct {
		leaf *testpki.Leaf
		ref  string
	}
	cases := map[string]keyCase{
		"rsa-bst": {f.rsa, signer.RefBST}, "rsa-issuer-serial": {f.rsa, signer.RefIssuerSerial},
		"rsa-ski": {f.rsa, signer.RefSKI}, "ec-thumbprint": {f.ec, signer.RefThumbprint}, "ec-bst": {f.ec, signer.RefBST},
	}
	for name, c := range cases {
		for _, v12 := range []bool{false, true} {
			t.Run(fmt.Sprintf("ok/%s/v12=%v", name, v12), func(t *testing.T) {
				first := f.sign(t, envelope(v12, 3, "first"), c.leaf, c.ref, f.now, nil)
				res, err := f.engine.Process(first, f.policy, f.now)
				require.NoError(t, err)
				require.NotEqual(t, metrics.LookupHit, res.Lookup)
				for k, text := range []string{"second &amp; &lt;more&gt; &#x41;", "third"} {
					msg := f.sign(t, envelope(v12, 3, text), c.leaf, c.ref, f.now.Add(time.Duration(k+1)*time.Second), nil)
					got, gerr := f.engine.Process(msg, f.policy, f.now)
					want, werr := f.dom.Process(msg, f.policy, f.now)
					require.NoError(t, werr)
					require.NoError(t, gerr)
					assert.Equal(t, metrics.LookupHit, got.Lookup, "message %d", k)
					assert.Empty(t, Compare(got, gerr, want, werr, f.policy))
				}
			})
		}
	}
}

// TestEncryptedMessagesHit: sign-then-encrypt messages are verified on the
// template path from the second message on, with the DOM engine's
// plaintext and facts; a plaintext of another shape falls back.
func TestEncryptedMessagesHit(t *testing.T) {
	f := newFixture(t, nil, testOptions())
	for _, ref := range []string{signer.RefIssuerSerial, signer.RefSKI, signer.RefThumbprint} {
		t.Run("ok/"+ref, func(t *testing.T) {
			enc := f.encrypt(ref)
			first := f.sign(t, envelope(false, 3, "first "+ref), f.rsa, signer.RefBST, f.now, enc)
			res, err := f.engine.Process(first, f.policy, f.now)
			require.NoError(t, err)
			require.NotEqual(t, metrics.LookupHit, res.Lookup)
			for k, text := range []string{"second &amp; &lt;more&gt;", "third"} {
				msg := f.sign(t, envelope(false, 3, text), f.rsa, signer.RefBST, f.now.Add(time.Duration(k+1)*time.Second), enc)
				got, gerr := f.engine.Process(msg, f.policy, f.now)
				want, werr := f.dom.Process(msg, f.policy, f.now)
				require.NoError(t, werr)
				require.NoError(t, gerr)
				assert.Equal(t, metrics.LookupHit, got.Lookup, "message %d", k)
				assert.Empty(t, Compare(got, gerr, want, werr, f.policy))
				out, _ := got.Forward(f.policy)
				assert.Contains(t, string(out), text, "the plaintext is forwarded")
			}
		})
	}
	// The plaintext Body is generic (issue 14): another payload shape hits
	// the same outer and inner templates.
	t.Run("ok/other-plaintext-shape-hits", func(t *testing.T) {
		enc := f.encrypt(signer.RefIssuerSerial)
		held := f.store.Len()
		msg := f.sign(t, envelope(false, 4, "four items"), f.rsa, signer.RefBST, f.now, enc)
		got, gerr := f.engine.Process(msg, f.policy, f.now)
		want, werr := f.dom.Process(msg, f.policy, f.now)
		require.NoError(t, werr)
		require.NoError(t, gerr)
		assert.Equal(t, metrics.LookupHit, got.Lookup)
		assert.Empty(t, Compare(got, gerr, want, werr, f.policy))
		assert.Equal(t, held, f.store.Len())
	})
	t.Run("fail/soap-element-in-plaintext", func(t *testing.T) {
		enc := f.encrypt(signer.RefIssuerSerial)
		body := `<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Header><wsa:To xmlns:wsa="http://www.w3.org/2005/08/addressing">urn:orders</wsa:To></soap:Header><soap:Body><m:Order xmlns:m="urn:example:orders"><soap:Fault/></m:Order></soap:Body></soap:Envelope>`
		msg := f.sign(t, []byte(body), f.rsa, signer.RefBST, f.now, enc)
		got, gerr := f.engine.Process(msg, f.policy, f.now)
		want, werr := f.dom.Process(msg, f.policy, f.now)
		require.Error(t, werr)
		assert.Error(t, gerr)
		assert.Empty(t, Compare(got, gerr, want, werr, f.policy))
	})
	for _, tpl := range f.store.Templates() {
		for _, s := range tpl.steps {
			if s.dec != nil {
				assert.NotNil(t, s.dec.inner.gbody, "the inner template's Body is generic")
				assert.NotNil(t, s.dec.inner.gbody.fast, "and takes the fast body")
			}
		}
	}
}
