package dom

import (
	"crypto/x509"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/testpki"
)

// TestCertKeysCacheBounded: the per-certificate lookup values are kept
// per pointer (one *CertKeys for one certificate while kept) and the map
// never holds more than its limit, sequentially; concurrently (under
// -race) at most the limit plus the goroutines racing past it. Every
// message's carried certificate that escapes tokenCache (a text above its
// bound) is a new pointer, so the bound is what keeps senders from
// growing the map (review of issue 14's h17-issuer).
func TestCertKeysCacheBounded(t *testing.T) {
	leaf := testpki.NewCA(t, "certkeys CA").IssueRSA(t, t.TempDir(), "leaf")
	parse := func() *x509.Certificate {
		c, err := x509.ParseCertificate(leaf.Cert.Raw)
		require.NoError(t, err)
		return c
	}
	size := func(cc *certKeysCache) (n int) {
		cc.m.Range(func(_, _ any) bool { n++; return true })
		return n
	}
	cc := &certKeysCache{limit: 4}
	kept := parse()
	k := cc.get(kept)
	assert.Same(t, k, cc.get(kept), "ok/one value per certificate")
	assert.Same(t, kept, k.Certificate())
	for range 50 {
		c := parse()
		assert.Same(t, c, cc.get(c).Certificate())
		require.LessOrEqual(t, size(cc), 4, "fail/grows past its limit")
	}

	const workers = 4
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range 50 {
				c, err := x509.ParseCertificate(leaf.Cert.Raw)
				if err != nil || cc.get(c).Certificate() != c {
					t.Error("another certificate's values")
					return
				}
			}
		})
	}
	wg.Wait()
	assert.LessOrEqual(t, size(cc), 4+workers, "fail/grows past its limit under concurrency")
}
