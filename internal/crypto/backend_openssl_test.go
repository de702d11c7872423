//go:build openssl

package crypto

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/testpki"
)

// TestSessionKeyFromEM checks the Go half of the OpenSSL backend's RSA 1.5
// against crypto/rsa on the same blocks: random ones (almost all
// malformed) and the shaped ones of pkcs1Blocks, for several key lengths.
func TestSessionKeyFromEM(t *testing.T) {
	k := testpki.RSAKey(t, 2048)
	blocks := pkcs1Blocks(k.Size())
	for range 200 {
		em := make([]byte, k.Size())
		_, _ = rand.Read(em[2:])
		em[1] = 2
		em[len(em)-33] = 0 // a separator where a 32-byte key would start
		blocks[fmt.Sprintf("random-%d", len(blocks))] = em
	}
	for name, em := range blocks {
		em[0] = em[0] & 0x7f // below the modulus
		ct := rawEncrypt(&k.PublicKey, em)
		for _, keyLen := range []int{16, 24, 32} {
			want := bytes.Repeat([]byte{0xee}, keyLen)
			got := bytes.Clone(want)
			//lint:ignore SA1019 the oracle is crypto/rsa's own implicit rejection
			_ = rsa.DecryptPKCS1v15SessionKey(nil, k, ct, want)
			sessionKeyFromEM(em, got)
			require.Equal(t, want, got, "%s, key of %d bytes", name, keyLen)
		}
	}
}

// TestOpenSSLErrorQueueCleared: after failing operations the thread's
// OpenSSL error queue is empty, so nothing of OpenSSL's can surface later
// in an error or a fault.
func TestOpenSSLErrorQueueCleared(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	k := testpki.RSAKey(t, 2048)
	b, err := backendKey(k)
	require.NoError(t, err)
	d := b.(crypto.Decrypter)
	bad := bytes.Repeat([]byte{0xff}, k.Size())
	_, err = d.Decrypt(nil, bad, &rsa.OAEPOptions{Hash: crypto.SHA256})
	require.Error(t, err)
	assert.False(t, opensslErrorQueued())
	_, err = d.Decrypt(nil, make([]byte, k.Size()), &rsa.OAEPOptions{Hash: crypto.SHA1})
	require.Error(t, err)
	assert.False(t, opensslErrorQueued())
	b.(sessionKeyDecrypter).decryptSessionKey(bad, make([]byte, 32))
	assert.False(t, opensslErrorQueued())
	_, err = b.Sign(nil, []byte("not a digest"), crypto.SHA256)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "error:", "no OpenSSL error string")
	assert.False(t, opensslErrorQueued())
	_, err = d.Decrypt(nil, bad, crypto.Hash(0))
	assert.Error(t, err, "PKCS#1 v1.5 only through the implicit-rejection path")
}

func BenchmarkOpenSSLKeyLoad(b *testing.B) {
	k := testpki.RSAKey(b, 2048)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := backendKey(k); err != nil {
			b.Fatal(err)
		}
	}
}

// TestOpenSSLKeyFreed: an OpenSSL key that nothing references any more
// (the key pair a reload replaced) is freed in OpenSSL too.
func TestOpenSSLKeyFreed(t *testing.T) {
	before := opensslKeysFreed.Load()
	func() {
		b, err := backendKey(testpki.RSAKey(t, 2048))
		require.NoError(t, err)
		_, err = b.Sign(nil, make([]byte, 32), crypto.SHA256)
		require.NoError(t, err)
	}()
	for i := 0; i < 50 && opensslKeysFreed.Load() == before; i++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	assert.Greater(t, opensslKeysFreed.Load(), before)
}

// TestOpenSSLKeyConcurrent: one key, many goroutines (the gateway's
// requests share the loaded key): every result is right.
func TestOpenSSLKeyConcurrent(t *testing.T) {
	k := testpki.RSAKey(t, 2048)
	b, err := backendKey(k)
	require.NoError(t, err)
	cek := bytes.Repeat([]byte{9}, 32)
	ct, err := rsa.EncryptOAEP(crypto.SHA1.New(), rand.Reader, &k.PublicKey, cek, nil)
	require.NoError(t, err)
	d := sha256.Sum256([]byte("concurrent"))
	want, err := k.Sign(nil, d[:], crypto.SHA256)
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for range 10 {
				got, err := DecryptKey(AlgRSAOAEPMGF1P, "", "", b.(crypto.Decrypter), ct, 32)
				if err != nil || !bytes.Equal(got, cek) {
					errs <- fmt.Errorf("decrypt: %x %v", got, err)
					return
				}
				sig, err := b.Sign(nil, d[:], crypto.SHA256)
				if err != nil || !bytes.Equal(sig, want) {
					errs <- fmt.Errorf("sign: %v", err)
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
