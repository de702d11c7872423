package template

import (
	"bytes"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/testpki"
	"github.com/wssgw/wssgw/internal/wss"
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

// TestTokenCertificateRememberedReverified: a remembered token certificate
// only spares its parsing; the trust store decides on it for every
// message, at that message's time and with the store in force then: the
// partner's certificate is refused once expired, and after a trust reload
// that drops its CA, though the step still remembers it (review of issue
// 14's 4 KiB hit).
func TestTokenCertificateRememberedReverified(t *testing.T) {
	f := newFixture(t, nil, testOptions())
	env := benchEnvelope(3, "Item")
	for range 2 {
		_, err := f.engine.Process(f.sign(t, env, f.rsa, signer.RefBST, f.now, nil), f.policy, f.now)
		require.NoError(t, err)
	}
	tpl, _ := f.match(t, f.sign(t, env, f.rsa, signer.RefBST, f.now, nil))
	st := sigOf(tpl)
	require.NotNil(t, st.cert.Load(), "the partner's certificate is remembered")
	require.True(t, bytes.Equal(st.cert.Load().cert.Raw, f.rsa.Cert.Raw))

	process := func(name string, at time.Time) error {
		t.Helper()
		m := f.sign(t, env, f.rsa, signer.RefBST, at, nil)
		res, err := f.engine.Process(m, f.policy, at)
		require.Equal(t, metrics.LookupHit, res.Lookup, "%s: not a template hit", name)
		return err
	}
	require.NoError(t, process("ok/remembered", f.now))

	expired := f.rsa.Cert.NotAfter.Add(time.Hour).UTC().Truncate(time.Second)
	require.Equal(t, wss.ReasonUntrusted, reasonOf(process("fail/expired-at-message-time", expired)))

	// A trust reload: the CA file now holds another CA.
	other := testpki.NewCA(t, "another CA")
	require.NoError(t, os.WriteFile(f.policy.Config.Trust.CAFiles[0], other.CertPEM, 0o600))
	require.NoError(t, f.policy.Refresh())
	require.True(t, bytes.Equal(st.cert.Load().cert.Raw, f.rsa.Cert.Raw), "still remembered")
	require.Equal(t, wss.ReasonUntrusted, reasonOf(process("fail/after-trust-reload", f.now)))
}

// TestTokenCertificateConcurrent: hits of two trusted partners on one
// template, concurrently, each verified with its own certificate while
// they displace each other's in the step (run with -race).
func TestTokenCertificateConcurrent(t *testing.T) {
	f := newFixture(t, nil, testOptions())
	other := f.ca.IssueRSA(t, t.TempDir(), "partner-rsa-2")
	env := benchEnvelope(3, "Item")
	for range 2 {
		_, err := f.engine.Process(f.sign(t, env, f.rsa, signer.RefBST, f.now, nil), f.policy, f.now)
		require.NoError(t, err)
	}
	leaves := []*testpki.Leaf{f.rsa, other}
	msgs := make([][]byte, len(leaves))
	for i, l := range leaves {
		msgs[i] = f.sign(t, env, l, signer.RefBST, f.now, nil)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2*len(leaves))
	for w := range 2 * len(leaves) {
		wg.Go(func() {
			i := w % len(leaves)
			for range 20 {
				res, err := f.engine.Process(msgs[i], f.policy, f.now)
				if err == nil && res.Lookup != metrics.LookupHit {
					err = fmt.Errorf("%s: not a hit", leaves[i].Cert.Subject.CommonName)
				}
				if err == nil && !bytes.Equal(res.Signatures[0].Signer.Certificate.Raw, leaves[i].Cert.Raw) {
					err = fmt.Errorf("%s: verified as another signer", leaves[i].Cert.Subject.CommonName)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
