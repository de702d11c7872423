package crypto

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"math/big"
	"testing"
	"time"

	"filippo.io/bigmod"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/testpki"
)

// rawSign computes em^d mod N: a "signature" over any encoded message, to
// forge the malformed encodings a verifier must refuse.
func rawSign(k *rsa.PrivateKey, em []byte) []byte {
	s := new(big.Int).Exp(new(big.Int).SetBytes(em), k.D, k.N)
	return s.FillBytes(make([]byte, k.Size()))
}

// encode is EM = 00 01 ff… 00 prefix hash, with the ff run of length ps
// (the rest padded at the end with junk, for the Bleichenbacher'06 form).
func encode(k int, prefix, hashed []byte, ps int, junk bool) []byte {
	em := []byte{0, 1}
	for range ps {
		em = append(em, 0xff)
	}
	em = append(append(append(em, 0), prefix...), hashed...)
	for junk && len(em) < k {
		em = append(em, 0x42)
	}
	return em
}

func TestCachedRSAVerify(t *testing.T) {
	key := testpki.RSAKey(t, 2048)
	pub := &key.PublicKey
	msg := []byte("<ds:SignedInfo/>")
	h := sha256.Sum256(msg)
	good, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, h[:])
	require.NoError(t, err)
	// The first verification is crypto/rsa's and caches the key.
	require.NoError(t, verifyPKCS1v15(pub, crypto.SHA256, h[:], good))
	rsaVerifiers.RLock()
	require.NotNil(t, rsaVerifiers.m[pub], "cached after a good signature")
	rsaVerifiers.RUnlock()

	prefix := digestInfoPrefix[crypto.SHA256]
	k := key.Size()
	ps := k - 3 - len(prefix) - len(h)
	flip := func(b []byte, i int) []byte { c := append([]byte(nil), b...); c[i] ^= 1; return c }
	other, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, make([]byte, 32))
	require.NoError(t, err)
	overN := pub.N.FillBytes(make([]byte, k))
	for _, c := range []struct {
		name   string
		sig    []byte
		hash   crypto.Hash
		hashed []byte
		ok     bool
	}{
		{"ok/good", good, crypto.SHA256, h[:], true},
		{"ok/raw-encoding", rawSign(key, encode(k, prefix, h[:], ps, false)), crypto.SHA256, h[:], true},
		{"fail/flipped-first-byte", flip(good, 0), crypto.SHA256, h[:], false},
		{"fail/flipped-last-byte", flip(good, k-1), crypto.SHA256, h[:], false},
		{"fail/other-message", other, crypto.SHA256, h[:], false},
		{"fail/short", good[1:], crypto.SHA256, h[:], false},
		{"fail/long", append([]byte{0}, good...), crypto.SHA256, h[:], false},
		{"fail/s-equals-N", overN, crypto.SHA256, h[:], false},
		{"fail/zero", make([]byte, k), crypto.SHA256, h[:], false},
		{"fail/other-hash-named", good, crypto.SHA384, append(h[:], make([]byte, 16)...), false},
		{"fail/hash-length", good, crypto.SHA256, h[:31], false},
		{"fail/block-type-2", rawSign(key, append([]byte{0, 2}, encode(k, prefix, h[:], ps, false)[2:]...)), crypto.SHA256, h[:], false},
		{"fail/padding-byte-not-ff", rawSign(key, func() []byte { e := encode(k, prefix, h[:], ps, false); e[10] = 0xfe; return e }()), crypto.SHA256, h[:], false},
		{"fail/no-zero-separator", rawSign(key, func() []byte { e := encode(k, prefix, h[:], ps, false); e[2+ps] = 0xff; return e }()), crypto.SHA256, h[:], false},
		{"fail/bleichenbacher-06-junk-after-hash", rawSign(key, encode(k, prefix, h[:], 8, true)), crypto.SHA256, h[:], false},
		{"fail/sha1-prefix-for-sha256", rawSign(key, encode(k, digestInfoPrefix[crypto.SHA1], h[:20], k-3-15-20, false)), crypto.SHA256, h[:], false},
	} {
		t.Run(c.name, func(t *testing.T) {
			stdErr := rsa.VerifyPKCS1v15(pub, c.hash, c.hashed, c.sig)
			err := verifyPKCS1v15(pub, c.hash, c.hashed, c.sig)
			assert.Equal(t, c.ok, err == nil, "cached: %v", err)
			assert.Equal(t, stdErr == nil, err == nil, "agrees with crypto/rsa (%v)", stdErr)
		})
	}
}

func FuzzCachedRSAVerify(f *testing.F) {
	key := testpki.RSAKey(f, 2048)
	pub := &key.PublicKey
	h := sha256.Sum256([]byte("fuzz"))
	good, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, h[:])
	require.NoError(f, err)
	require.NoError(f, verifyPKCS1v15(pub, crypto.SHA256, h[:], good))
	f.Add(good, 0, byte(1))
	f.Add(good, 100, byte(0x80))
	f.Fuzz(func(t *testing.T, sig []byte, at int, x byte) {
		if len(sig) > 0 {
			sig = append([]byte(nil), sig...)
			sig[(at%len(sig)+len(sig))%len(sig)] ^= x
		}
		want := rsa.VerifyPKCS1v15(pub, crypto.SHA256, h[:], sig) == nil
		if got := verifyPKCS1v15(pub, crypto.SHA256, h[:], sig) == nil; got != want {
			t.Fatalf("cached %v, crypto/rsa %v", got, want)
		}
	})
}

// BenchmarkRSAVerify compares crypto/rsa with the cached modulus on one
// RSA-2048 signature, in one run.
func BenchmarkRSAVerify(b *testing.B) {
	key := testpki.RSAKey(b, 2048)
	h := sha256.Sum256([]byte("bench"))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, h[:])
	require.NoError(b, err)
	require.NoError(b, verifyPKCS1v15(&key.PublicKey, crypto.SHA256, h[:], sig))
	b.ReportAllocs()
	var std, cached float64
	for b.Loop() {
		s := nanotime()
		_ = rsa.VerifyPKCS1v15(&key.PublicKey, crypto.SHA256, h[:], sig)
		m := nanotime()
		_ = verifyPKCS1v15(&key.PublicKey, crypto.SHA256, h[:], sig)
		std, cached = std+float64(m-s), cached+float64(nanotime()-m)
	}
	b.ReportMetric(std/float64(b.N)/1e3, "µs-crypto/rsa")
	b.ReportMetric(cached/float64(b.N)/1e3, "µs-cached")
	b.ReportMetric(std/cached, "speedup")
}

func nanotime() int64 { return time.Now().UnixNano() }

func TestVerifySignatureSHA256(t *testing.T) {
	key := testpki.RSAKey(t, 2048)
	si := []byte("<ds:SignedInfo>a</ds:SignedInfo>")
	sum := sha256.Sum256(si)
	other := sha256.Sum256([]byte("<ds:SignedInfo>b</ds:SignedInfo>"))
	for _, c := range []struct {
		name, alg string
		sum       *[32]byte
		ok        bool
	}{
		{"ok/sha256-method-uses-the-digest", AlgRSASHA256, &sum, true},
		{"fail/sha256-method-verifies-the-digest-given", AlgRSASHA256, &other, false},
		{"ok/sha512-method-hashes-signedinfo-itself", AlgRSASHA512, &other, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			sig, err := Sign(c.alg, key, si)
			require.NoError(t, err)
			err = VerifySignatureSHA256(c.alg, &key.PublicKey, si, c.sum, sig)
			assert.Equal(t, c.ok, err == nil, "%v", err)
		})
	}
}

// TestNatBytes holds natBytes to bigmod's Bytes, which it replaces on the
// verify path: values with leading zero bytes, the largest, odd sizes.
func TestNatBytes(t *testing.T) {
	for _, bitLen := range []int{1024, 2047, 2048, 3072, 4096} {
		// Any odd modulus of that length will do: no prime search.
		n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), uint(bitLen-1)))
		require.NoError(t, err)
		n.SetBit(n, bitLen-1, 1).SetBit(n, 0, 1)
		m, err := bigmod.NewModulus(n.Bytes())
		require.NoError(t, err)
		for _, x := range []*big.Int{big.NewInt(0), big.NewInt(1), new(big.Int).Rsh(n, 9), new(big.Int).Sub(n, big.NewInt(1))} {
			v, err := bigmod.NewNat().SetBytes(x.Bytes(), m)
			require.NoError(t, err)
			got := natBytes(v, make([]byte, m.Size()))
			assert.Equal(t, v.Bytes(m), got, "ok/%d bits %x", bitLen, x)
		}
		v, _ := bigmod.NewNat().SetBytes(new(big.Int).Sub(n, big.NewInt(1)).Bytes(), m)
		assert.Nil(t, natBytes(v, make([]byte, m.Size()-8)), "fail/%d bits into a short buffer", bitLen)
	}
}
