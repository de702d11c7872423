package reload

import (
	"bytes"
	"context"
	"crypto"
	"crypto/x509"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	wcrypto "github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/testpki"
	"github.com/wssgw/wssgw/internal/trust"
)

type observed struct {
	mu   sync.Mutex
	errs []error
}

func (o *observed) observe(_ string, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.errs = append(o.errs, err)
}

func (o *observed) last() (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.errs) == 0 {
		return 0, nil
	}
	return len(o.errs), o.errs[len(o.errs)-1]
}

func matches(kp *wcrypto.KeyPair) bool {
	return kp.Signer.Public().(interface{ Equal(crypto.PublicKey) bool }).Equal(kp.Certificate.PublicKey)
}

// TestReloadUnderReaders rotates the key pair many times while readers load
// it continuously: under -race, no reader may see a mismatched pair.
func TestReloadUnderReaders(t *testing.T) {
	dir := t.TempDir()
	ca := testpki.NewIssuer(t, "Reload CA", nil)
	write := func() *x509.Certificate {
		c, k := ca.Issue(t, "svc", nil)
		// Write through temporary files and rename, as a careful writer does;
		// the two renames are still not atomic together.
		testpki.WriteFile(t, dir, "tls.crt.tmp", testpki.CertsPEM(c))
		testpki.WriteFile(t, dir, "tls.key.tmp", testpki.PKCS8PEM(t, k))
		require.NoError(t, os.Rename(filepath.Join(dir, "tls.crt.tmp"), filepath.Join(dir, "tls.crt")))
		require.NoError(t, os.Rename(filepath.Join(dir, "tls.key.tmp"), filepath.Join(dir, "tls.key")))
		return c
	}
	write()
	opts := wcrypto.KeyFileOptions{CertFile: filepath.Join(dir, "tls.crt"), KeyFile: filepath.Join(dir, "tls.key")}
	r, err := NewKeySource("server", opts, Options{Interval: time.Millisecond})
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go r.Run(ctx)
	var bad, reads atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if kp := r.Current(); kp == nil || !matches(kp) {
					bad.Add(1)
				}
				reads.Add(1)
			}
		}()
	}
	var last *x509.Certificate
	for range 20 {
		last = write()
		time.Sleep(2 * time.Millisecond)
	}
	require.Eventually(t, func() bool { return r.Current().Certificate.Equal(last) }, 5*time.Second, time.Millisecond)
	cancel()
	wg.Wait()
	assert.Zero(t, bad.Load())
	assert.Positive(t, reads.Load())
}

func TestReloadKeepsOldOnInvalidFiles(t *testing.T) {
	dir := t.TempDir()
	ca := testpki.NewIssuer(t, "Reload CA", nil)
	c1, k1 := ca.Issue(t, "one", nil)
	c2, k2 := ca.Issue(t, "two", nil)
	crt := testpki.WriteFile(t, dir, "tls.crt", testpki.CertsPEM(c1))
	key := testpki.WriteFile(t, dir, "tls.key", testpki.PKCS8PEM(t, k1))
	var logs bytes.Buffer
	var obs observed
	r, err := NewKeySource("server", wcrypto.KeyFileOptions{CertFile: crt, KeyFile: key}, Options{
		Logger: slog.New(slog.NewTextHandler(&logs, nil)), Observer: obs.observe})
	require.NoError(t, err)

	steps := []struct {
		name    string
		apply   func()
		changed bool
		err     error
		want    *x509.Certificate
	}{
		{"ok/unchanged-files-no-reload", func() {}, false, nil, c1},
		{"fail/new-cert-old-key-mismatch-keeps-old", func() { testpki.WriteFile(t, dir, "tls.crt", testpki.CertsPEM(c2)) }, false, wcrypto.ErrKeyMismatch, c1},
		{"ok/same-broken-content-not-retried", func() {}, false, nil, c1},
		{"ok/matching-key-arrives", func() { testpki.WriteFile(t, dir, "tls.key", testpki.PKCS8PEM(t, k2)) }, true, nil, c2},
		{"fail/garbage-keeps-old", func() { testpki.WriteFile(t, dir, "tls.key", []byte("garbage")) }, false, wcrypto.ErrLoad, c2},
		{"fail/weak-key-keeps-old", func() {
			c, k := ca.Issue(t, "weak", testpki.RSAKey(t, 1024))
			testpki.WriteFile(t, dir, "tls.crt", testpki.CertsPEM(c))
			testpki.WriteFile(t, dir, "tls.key", testpki.PKCS8PEM(t, k))
		}, false, wcrypto.ErrKeyTooWeak, c2},
		{"fail/file-removed-keeps-old", func() { require.NoError(t, os.Remove(key)) }, false, wcrypto.ErrLoad, c2},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			n0, _ := obs.last()
			st.apply()
			changed, err := r.Check()
			assert.Equal(t, st.changed, changed)
			if st.err != nil {
				require.ErrorIs(t, err, st.err)
				n, last := obs.last()
				assert.Equal(t, n0+1, n, "observer called once")
				require.ErrorIs(t, last, st.err)
			} else {
				require.NoError(t, err)
			}
			assert.True(t, r.Current().Certificate.Equal(st.want))
			assert.True(t, matches(r.Current()))
		})
	}
	assert.Contains(t, logs.String(), "reload failed")
	assert.Contains(t, logs.String(), "reason=key_mismatch")
}

// TestReloadKubernetesSymlinkSwap mimics how the kubelet updates a mounted
// secret: files are symlinks through "..data", which is atomically renamed
// to point at a new timestamped directory.
func TestReloadKubernetesSymlinkSwap(t *testing.T) {
	dir := t.TempDir()
	ca := testpki.NewIssuer(t, "K8s CA", nil)
	version := func(name string) *x509.Certificate {
		c, k := ca.Issue(t, name, nil)
		vdir := filepath.Join(dir, "..2026_"+name)
		require.NoError(t, os.Mkdir(vdir, 0o700))
		testpki.WriteFile(t, vdir, "tls.crt", testpki.CertsPEM(c))
		testpki.WriteFile(t, vdir, "tls.key", testpki.PKCS8PEM(t, k))
		tmp := filepath.Join(dir, "..data_tmp")
		require.NoError(t, os.Symlink(filepath.Base(vdir), tmp))
		require.NoError(t, os.Rename(tmp, filepath.Join(dir, "..data")))
		return c
	}
	c1 := version("a")
	for _, f := range []string{"tls.crt", "tls.key"} {
		require.NoError(t, os.Symlink(filepath.Join("..data", f), filepath.Join(dir, f)))
	}
	r, err := NewKeySource("k8s", wcrypto.KeyFileOptions{CertFile: filepath.Join(dir, "tls.crt"), KeyFile: filepath.Join(dir, "tls.key")}, Options{})
	require.NoError(t, err)
	require.True(t, r.Current().Certificate.Equal(c1))

	c2 := version("b")
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "..2026_a")))
	changed, err := r.Check()
	require.NoError(t, err)
	assert.True(t, changed)
	assert.True(t, r.Current().Certificate.Equal(c2))
}

// TestTrustReloadInvalidatesCache: a decision cached by the old store must
// not survive a reload that removes the CA.
func TestTrustReloadInvalidatesCache(t *testing.T) {
	dir := t.TempDir()
	ca1, ca2 := testpki.NewIssuer(t, "CA1", nil), testpki.NewIssuer(t, "CA2", nil)
	leaf, _ := ca1.Issue(t, "leaf", nil)
	caFile := testpki.WriteFile(t, dir, "ca.crt", testpki.CertsPEM(ca1.Cert))
	r, err := NewTrustSource("partners", trust.Options{CAFiles: []string{caFile}}, Options{})
	require.NoError(t, err)

	old := r.Current()
	id1, err := old.Verify(leaf, nil, testpki.T0, trust.PurposeSigning)
	require.NoError(t, err)
	id2, err := old.Verify(leaf, nil, testpki.T0, trust.PurposeSigning)
	require.NoError(t, err)
	require.Same(t, id1, id2, "the decision is cached")

	testpki.WriteFile(t, dir, "ca.crt", testpki.CertsPEM(ca2.Cert))
	changed, err := r.Check()
	require.NoError(t, err)
	require.True(t, changed)
	_, err = r.Current().Verify(leaf, nil, testpki.T0, trust.PurposeSigning)
	require.ErrorIs(t, err, trust.ErrUntrusted)

	testpki.WriteFile(t, dir, "ca.crt", []byte("broken"))
	_, err = r.Check()
	require.ErrorIs(t, err, wcrypto.ErrLoad)
	_, err = r.Current().Verify(leaf, nil, testpki.T0, trust.PurposeSigning)
	require.ErrorIs(t, err, trust.ErrUntrusted, "the CA2 store stays in use")
}

func TestNewReloaderInitialFailure(t *testing.T) {
	_, err := NewKeySource("x", wcrypto.KeyFileOptions{CertFile: filepath.Join(t.TempDir(), "missing")}, Options{})
	require.ErrorIs(t, err, wcrypto.ErrLoad)
}
