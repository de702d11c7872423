package crypto

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"io"
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/testpki"
	"github.com/wssgw/wssgw/internal/testvectors"
)

// opaqueDecrypter hides *rsa.PrivateKey, as an HSM-backed key would.
type opaqueDecrypter struct{ d crypto.Decrypter }

func (o opaqueDecrypter) Public() crypto.PublicKey { return o.d.Public() }
func (o opaqueDecrypter) Decrypt(r io.Reader, c []byte, opts crypto.DecrypterOpts) ([]byte, error) {
	return o.d.Decrypt(r, c, opts)
}

// ecDecrypter is a Decrypter whose key is not RSA.
type ecDecrypter struct{ pub crypto.PublicKey }

func (e ecDecrypter) Public() crypto.PublicKey { return e.pub }
func (e ecDecrypter) Decrypt(io.Reader, []byte, crypto.DecrypterOpts) ([]byte, error) {
	panic("must not be called for a non-RSA key")
}

func oaep(t testing.TB, pub *rsa.PublicKey, h, mgf crypto.Hash, msg []byte) []byte {
	c, err := rsa.EncryptOAEPWithOptions(rand.Reader, pub, msg, &rsa.OAEPOptions{Hash: h, MGFHash: mgf})
	require.NoError(t, err)
	return c
}

func TestDecryptKeyOAEP(t *testing.T) {
	k := testpki.RSAKey(t, 2048)
	pub := &k.PublicKey
	cek := bytes.Repeat([]byte{0x5a}, 32)
	labeled, err := rsa.EncryptOAEPWithOptions(rand.Reader, pub, cek, &rsa.OAEPOptions{Hash: crypto.SHA1, Label: []byte("OAEPparams")})
	require.NoError(t, err)
	tampered := oaep(t, pub, crypto.SHA1, crypto.SHA1, cek)
	tampered[10] ^= 1
	ec := ecDecrypter{&newSigKeys(t).p256.PublicKey}

	tests := []struct {
		name        string
		alg, dg, mg string
		priv        crypto.Decrypter
		ct          []byte
		keyLen      int
		err         error
	}{
		{"ok/mgf1p-default-sha1", AlgRSAOAEPMGF1P, "", "", k, oaep(t, pub, crypto.SHA1, crypto.SHA1, cek), 32, nil},
		// XMLEnc 1.0 §5.4.2: the DigestMethod changes the OAEP hash only;
		// MGF1 stays SHA-1.
		{"ok/mgf1p-sha256-digest-mgf-stays-sha1", AlgRSAOAEPMGF1P, AlgDigestSHA256, "", k, oaep(t, pub, crypto.SHA256, crypto.SHA1, cek), 32, nil},
		{"ok/mgf1p-explicit-mgf1sha1", AlgRSAOAEPMGF1P, "", AlgMGF1SHA1, k, oaep(t, pub, crypto.SHA1, crypto.SHA1, cek), 32, nil},
		{"ok/mgf1p-opaque-decrypter", AlgRSAOAEPMGF1P, "", "", opaqueDecrypter{k}, oaep(t, pub, crypto.SHA1, crypto.SHA1, cek), 32, nil},
		{"ok/xenc11-defaults-sha1-mgf1sha1", AlgRSAOAEP, "", "", k, oaep(t, pub, crypto.SHA1, crypto.SHA1, cek), 32, nil},
		{"ok/xenc11-sha256-mgf1sha256", AlgRSAOAEP, AlgDigestSHA256, AlgMGF1SHA256, k, oaep(t, pub, crypto.SHA256, crypto.SHA256, cek), 32, nil},
		{"ok/xenc11-sha512-mgf1sha1", AlgRSAOAEP, AlgDigestSHA512, "", k, oaep(t, pub, crypto.SHA512, crypto.SHA1, cek), 32, nil},
		{"ok/xenc11-sha1-mgf1sha384", AlgRSAOAEP, "", AlgMGF1SHA384, k, oaep(t, pub, crypto.SHA1, crypto.SHA384, cek), 32, nil},
		{"ok/keylen-unchecked", AlgRSAOAEP, "", "", k, oaep(t, pub, crypto.SHA1, crypto.SHA1, cek[:16]), 0, nil},
		{"fail/mgf1p-with-mgf-sha256-data", AlgRSAOAEPMGF1P, AlgDigestSHA256, "", k, oaep(t, pub, crypto.SHA256, crypto.SHA256, cek), 32, ErrDecrypt},
		{"fail/mgf1p-with-mgf-element-sha256", AlgRSAOAEPMGF1P, "", AlgMGF1SHA256, k, oaep(t, pub, crypto.SHA1, crypto.SHA256, cek), 32, ErrUnsupportedAlgorithm},
		{"fail/xenc11-mgf-mismatch", AlgRSAOAEP, AlgDigestSHA256, "", k, oaep(t, pub, crypto.SHA256, crypto.SHA256, cek), 32, ErrDecrypt},
		{"fail/digest-mismatch", AlgRSAOAEP, AlgDigestSHA256, "", k, oaep(t, pub, crypto.SHA1, crypto.SHA1, cek), 32, ErrDecrypt},
		{"fail/oaep-params-label", AlgRSAOAEPMGF1P, "", "", k, labeled, 32, ErrDecrypt},
		{"fail/tampered", AlgRSAOAEPMGF1P, "", "", k, tampered, 32, ErrDecrypt},
		{"fail/truncated", AlgRSAOAEPMGF1P, "", "", k, truncated(oaep(t, pub, crypto.SHA1, crypto.SHA1, cek)), 32, ErrDecrypt},
		{"fail/empty", AlgRSAOAEPMGF1P, "", "", k, nil, 32, ErrDecrypt},
		{"fail/key-length-differs", AlgRSAOAEP, "", "", k, oaep(t, pub, crypto.SHA1, crypto.SHA1, cek[:16]), 32, ErrDecrypt},
		{"fail/unknown-digest", AlgRSAOAEP, "http://www.w3.org/2001/04/xmldsig-more#md5", "", k, nil, 32, ErrUnsupportedAlgorithm},
		{"fail/signature-uri-as-digest", AlgRSAOAEP, AlgRSASHA256, "", k, nil, 32, ErrUnsupportedAlgorithm},
		{"fail/digest-uri-as-mgf", AlgRSAOAEP, "", AlgDigestSHA256, k, nil, 32, ErrUnsupportedAlgorithm},
		{"fail/unknown-alg", "http://www.w3.org/2001/04/xmlenc#rsa-oaep", "", "", k, nil, 32, ErrUnsupportedAlgorithm},
		{"fail/key-wrap-uri", AlgKWAES256, "", "", k, nil, 32, ErrUnsupportedAlgorithm},
		{"fail/ecdsa-key", AlgRSAOAEP, "", "", ec, nil, 32, ErrAlgorithmKey},
		{"fail/nil-key", AlgRSAOAEP, "", "", nil, nil, 32, ErrAlgorithmKey},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecryptKey(tc.alg, tc.dg, tc.mg, tc.priv, tc.ct, tc.keyLen)
			if tc.err == nil {
				require.NoError(t, err)
				if tc.keyLen == 0 {
					assert.Equal(t, cek[:16], got)
				} else {
					assert.Equal(t, cek, got)
				}
				return
			}
			require.ErrorIs(t, err, tc.err)
			assert.Nil(t, got)
			if tc.err == ErrDecrypt {
				assert.Equal(t, errDecrypt, err, "every OAEP failure is the same error, without detail")
			}
		})
	}
}

func TestDecryptKeyRSA15(t *testing.T) {
	k := testpki.RSAKey(t, 2048)
	cek := bytes.Repeat([]byte{0xa5}, 32)
	//lint:ignore SA1019 the test makes legacy ciphertexts on purpose
	good, err := rsa.EncryptPKCS1v15(rand.Reader, &k.PublicKey, cek)
	require.NoError(t, err)
	//lint:ignore SA1019 the test makes legacy ciphertexts on purpose
	short, err := rsa.EncryptPKCS1v15(rand.Reader, &k.PublicKey, cek[:16])
	require.NoError(t, err)
	tampered := append([]byte(nil), good...)
	tampered[5] ^= 0x80
	oaepCT := oaep(t, &k.PublicKey, crypto.SHA1, crypto.SHA1, cek)

	t.Run("ok/decrypts", func(t *testing.T) {
		got, err := DecryptKey(AlgRSA15, "", "", k, good, 32)
		require.NoError(t, err)
		assert.Equal(t, cek, got)
	})
	// Bleichenbacher countermeasure: a failure is not an error but a random
	// key of the expected length, different every time.
	for name, ct := range map[string][]byte{
		"random-key/tampered":          tampered,
		"random-key/wrong-length-key":  short,
		"random-key/oaep-ciphertext":   oaepCT,
		"random-key/wrong-size-cipher": good[1:],
		"random-key/empty":             nil,
	} {
		t.Run("ok/"+name, func(t *testing.T) {
			a, err := DecryptKey(AlgRSA15, "", "", k, ct, 32)
			require.NoError(t, err)
			b, err := DecryptKey(AlgRSA15, "", "", k, ct, 32)
			require.NoError(t, err)
			require.Len(t, a, 32)
			require.Len(t, b, 32)
			assert.NotEqual(t, a, b)
			assert.NotEqual(t, cek, a)
			assert.NotEqual(t, cek[:16], a[:16])
		})
	}
	tests := []struct {
		name   string
		priv   crypto.Decrypter
		dg, mg string
		keyLen int
		err    error
	}{
		{"fail/opaque-decrypter", opaqueDecrypter{k}, "", "", 32, ErrAlgorithmKey},
		{"fail/no-key-length", k, "", "", 0, ErrDecrypt},
		{"fail/with-digest-method", k, AlgDigestSHA256, "", 32, ErrUnsupportedAlgorithm},
		{"fail/with-mgf", k, "", AlgMGF1SHA1, 32, ErrUnsupportedAlgorithm},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecryptKey(AlgRSA15, tc.dg, tc.mg, tc.priv, good, tc.keyLen)
			require.ErrorIs(t, err, tc.err)
			assert.Nil(t, got)
		})
	}
}

func TestEncryptKey(t *testing.T) {
	k := testpki.RSAKey(t, 2048)
	small := testpki.RSAKey(t, 1024)
	cek := bytes.Repeat([]byte{7}, 32)
	tests := []struct {
		name        string
		alg, dg, mg string
		pub         *rsa.PublicKey
		key         []byte
		err         error
	}{
		{"ok/mgf1p", AlgRSAOAEPMGF1P, "", "", &k.PublicKey, cek, nil},
		{"ok/mgf1p-sha256", AlgRSAOAEPMGF1P, AlgDigestSHA256, "", &k.PublicKey, cek, nil},
		{"ok/xenc11-sha256-mgf1sha256", AlgRSAOAEP, AlgDigestSHA256, AlgMGF1SHA256, &k.PublicKey, cek, nil},
		{"ok/xenc11-sha512-mgf1sha512", AlgRSAOAEP, AlgDigestSHA512, AlgMGF1SHA512, &k.PublicKey, cek, nil},
		{"fail/rsa15-refused", AlgRSA15, "", "", &k.PublicKey, cek, ErrUnsupportedAlgorithm},
		{"fail/nil-key", AlgRSAOAEP, "", "", nil, cek, ErrAlgorithmKey},
		{"fail/message-too-long-for-key", AlgRSAOAEP, AlgDigestSHA512, "", &small.PublicKey, make([]byte, 100), ErrAlgorithmKey},
		{"fail/mgf1p-with-mgf-sha256", AlgRSAOAEPMGF1P, "", AlgMGF1SHA256, &k.PublicKey, cek, ErrUnsupportedAlgorithm},
		{"fail/cipher-uri", AlgAES256GCM, "", "", &k.PublicKey, cek, ErrUnsupportedAlgorithm},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ct, err := EncryptKey(tc.alg, tc.dg, tc.mg, tc.pub, tc.key)
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				assert.Nil(t, ct)
				return
			}
			require.NoError(t, err)
			require.Len(t, ct, k.Size())
			got, err := DecryptKey(tc.alg, tc.dg, tc.mg, k, ct, len(tc.key))
			require.NoError(t, err)
			assert.Equal(t, tc.key, got)
			// The parameters are part of the algorithm: decrypting with
			// other ones fails.
			if tc.alg == AlgRSAOAEP {
				_, err = DecryptKey(AlgRSAOAEPMGF1P, tc.dg, "", k, ct, len(tc.key))
				require.ErrorIs(t, err, ErrDecrypt)
			}
		})
	}
}

var cipherValueRe = regexp.MustCompile(`<xenc:EncryptionMethod Algorithm="([^"]+)"/>.*?<xenc:CipherValue>([^<]+)</xenc:CipherValue>`)

// TestWSS4JEncryptedKeyAndData decrypts the committed WSS4J signencr-gcm
// messages: EncryptedKey (rsa-oaep-mgf1p) with the server key, then the
// Body's EncryptedData (aes256-gcm) with the transported key.
func TestWSS4JEncryptedKeyAndData(t *testing.T) {
	keyPEM, err := os.ReadFile(testvectors.Path(t, "wss4j/keys/server.key"))
	require.NoError(t, err)
	priv, err := ParsePrivateKeyPEM(keyPEM)
	require.NoError(t, err)
	dec, ok := priv.(crypto.Decrypter)
	require.True(t, ok)
	for _, name := range []string{"0000.xml", "0001.xml"} {
		t.Run("ok/"+name, func(t *testing.T) {
			msg, err := os.ReadFile(testvectors.Path(t, "wss4j/signencr-gcm/"+name))
			require.NoError(t, err)
			m := cipherValueRe.FindAllSubmatch(msg, -1)
			require.Len(t, m, 2, "one EncryptedKey, one EncryptedData")
			require.Equal(t, AlgRSAOAEPMGF1P, string(m[0][1]))
			require.Equal(t, AlgAES256GCM, string(m[1][1]))
			ek, err := base64.StdEncoding.DecodeString(string(m[0][2]))
			require.NoError(t, err)
			ed, err := base64.StdEncoding.DecodeString(string(m[1][2]))
			require.NoError(t, err)

			cek, err := DecryptKey(AlgRSAOAEPMGF1P, "", "", dec, ek, KeySize(AlgAES256GCM))
			require.NoError(t, err)
			body, err := DecryptData(AlgAES256GCM, cek, ed)
			require.NoError(t, err)
			assert.True(t, bytes.HasPrefix(body, []byte("<")), "%q", body)
			assert.Contains(t, string(body), "</")

			// The vector under the wrong algorithms or a tampered value.
			_, err = DecryptKey(AlgRSAOAEP, AlgDigestSHA256, "", dec, ek, 32)
			require.ErrorIs(t, err, ErrDecrypt)
			_, err = DecryptData(AlgAES256CBC, cek, ed)
			require.ErrorIs(t, err, ErrDecrypt)
			ed[len(ed)-1] ^= 1
			_, err = DecryptData(AlgAES256GCM, cek, ed)
			require.ErrorIs(t, err, ErrDecrypt)
		})
	}
}

func BenchmarkDecryptKeyOAEP(b *testing.B) {
	k := testpki.RSAKey(b, 2048)
	ct := oaep(b, &k.PublicKey, crypto.SHA1, crypto.SHA1, make([]byte, 32))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecryptKey(AlgRSAOAEPMGF1P, "", "", k, ct, 32); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecryptKeyOAEPFailure(b *testing.B) {
	k := testpki.RSAKey(b, 2048)
	ct := oaep(b, &k.PublicKey, crypto.SHA1, crypto.SHA1, make([]byte, 32))
	ct[3] ^= 1
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecryptKey(AlgRSAOAEPMGF1P, "", "", k, ct, 32); err == nil {
			b.Fatal("tampered ciphertext decrypted")
		}
	}
}

func TestCheckKeyTransport(t *testing.T) {
	tests := map[string]struct {
		alg, digest, mgf string
		ok               bool
	}{
		"ok/mgf1p":                {AlgRSAOAEPMGF1P, "", "", true},
		"ok/mgf1p-sha256-digest":  {AlgRSAOAEPMGF1P, AlgDigestSHA256, "", true},
		"ok/oaep-mgf1-sha256":     {AlgRSAOAEP, AlgDigestSHA256, AlgMGF1SHA256, true},
		"ok/rsa15":                {AlgRSA15, "", "", true},
		"fail/not-key-transport":  {AlgAES256GCM, "", "", false},
		"fail/unknown-digest":     {AlgRSAOAEP, "urn:md4", "", false},
		"fail/data-cipher-digest": {AlgRSAOAEP, AlgAES128CBC, "", false},
		"fail/mgf1p-other-mgf":    {AlgRSAOAEPMGF1P, "", AlgMGF1SHA256, false},
		"fail/rsa15-with-digest":  {AlgRSA15, AlgDigestSHA256, "", false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := CheckKeyTransport(tc.alg, tc.digest, tc.mgf)
			if tc.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrUnsupportedAlgorithm)
		})
	}
}

// truncated cuts a ciphertext's last byte: cutting its first, when that
// byte is 0 (about once in 256), leaves the same integer, a valid key.
func truncated(c []byte) []byte { return c[:len(c)-1] }
