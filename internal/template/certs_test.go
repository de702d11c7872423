package template

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/testpki"
)

// TestTokenCertificateRemembered: a signature step remembers the last
// token certificate the trust store accepted, so that the next message
// with that token skips the certificate cache; a token the trust store
// refuses does not displace it, another trusted one does, and every
// message is still verified by the trust store.
func TestTokenCertificateRemembered(t *testing.T) {
	f := newFixture(t, nil, testOptions())
	dir := t.TempDir()
	other := f.ca.IssueRSA(t, dir, "partner-rsa-2")
	stranger := testpki.NewCA(t, "stranger CA").IssueRSA(t, dir, "stranger")
	env := benchEnvelope(3, "Item")
	_, err := f.engine.Process(f.sign(t, env, f.rsa, signer.RefBST, f.now, nil), f.policy, f.now)
	require.NoError(t, err)
	msg := f.sign(t, env, f.rsa, signer.RefBST, f.now, nil)
	tpl, _ := f.match(t, msg)
	st := sigOf(tpl)
	remembered := func() []byte {
		if c := st.cert.Load(); c != nil {
			return c.cert.Raw
		}
		return nil
	}
	for _, c := range []struct {
		name     string
		leaf     *testpki.Leaf
		ok       bool
		remember []byte
	}{
		{"ok/partner", f.rsa, true, f.rsa.Cert.Raw},
		{"ok/partner-again", f.rsa, true, f.rsa.Cert.Raw},
		{"fail/stranger-not-remembered", stranger, false, f.rsa.Cert.Raw},
		{"ok/other-partner", other, true, other.Cert.Raw},
		{"fail/stranger-after-other", stranger, false, other.Cert.Raw},
		{"ok/partner-back", f.rsa, true, f.rsa.Cert.Raw},
	} {
		m := f.sign(t, env, c.leaf, signer.RefBST, f.now, nil)
		if got, _ := f.match(t, m); got != tpl {
			t.Fatalf("%s: the message does not match the template", c.name)
		}
		res, err := f.engine.Process(m, f.policy, f.now)
		require.Equal(t, c.ok, err == nil, "%s: %v", c.name, err)
		require.Equal(t, metrics.LookupHit, res.Lookup, c.name)
		if c.ok {
			require.True(t, bytes.Equal(res.Signatures[0].Signer.Certificate.Raw, c.leaf.Cert.Raw), c.name)
		}
		require.True(t, bytes.Equal(remembered(), c.remember), "%s: remembers another certificate", c.name)
	}
}
