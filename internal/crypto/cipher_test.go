package crypto

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/testvectors"
)

var blockCiphers = []string{AlgAES128CBC, AlgAES192CBC, AlgAES256CBC, AlgAES128GCM, AlgAES192GCM, AlgAES256GCM}

func TestKeySize(t *testing.T) {
	tests := []struct {
		name string
		alg  string
		want int
	}{
		{"ok/aes128-cbc", AlgAES128CBC, 16},
		{"ok/aes192-cbc", AlgAES192CBC, 24},
		{"ok/aes256-cbc", AlgAES256CBC, 32},
		{"ok/aes128-gcm", AlgAES128GCM, 16},
		{"ok/aes192-gcm", AlgAES192GCM, 24},
		{"ok/aes256-gcm", AlgAES256GCM, 32},
		{"ok/kw-aes128", AlgKWAES128, 16},
		{"ok/kw-aes192", AlgKWAES192, 24},
		{"ok/kw-aes256", AlgKWAES256, 32},
		{"fail/key-transport", AlgRSAOAEP, 0},
		{"fail/digest", AlgDigestSHA256, 0},
		{"fail/3des", "http://www.w3.org/2001/04/xmlenc#tripledes-cbc", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, KeySize(tc.alg))
		})
	}
}

func TestEncryptDecryptData(t *testing.T) {
	for _, alg := range blockCiphers {
		key := make([]byte, KeySize(alg))
		_, _ = rand.Read(key)
		for _, n := range []int{0, 1, 15, 16, 17, 31, 32, 1000} {
			pt := bytes.Repeat([]byte{'x'}, n)
			t.Run(fmt.Sprintf("ok/%s/%d-bytes", AlgorithmLabel(alg), n), func(t *testing.T) {
				cv, err := EncryptData(alg, key, pt, nil)
				require.NoError(t, err)
				if strings.HasSuffix(alg, "gcm") {
					require.Len(t, cv, 12+n+16, "IV ‖ ciphertext ‖ tag")
				} else {
					require.Len(t, cv, 16+(n/16+1)*16, "IV ‖ ciphertext with 1..16 pad bytes")
				}
				got, err := DecryptData(alg, key, cv)
				require.NoError(t, err)
				assert.Equal(t, pt, got)
				again, err := EncryptData(alg, key, pt, nil)
				require.NoError(t, err)
				assert.NotEqual(t, cv[:12], again[:12], "a fresh IV each time")
			})
		}
	}
}

// cbcRaw encrypts body (already a multiple of 16 bytes, padding included)
// so the tests choose the padding bytes.
func cbcRaw(t testing.TB, key, body []byte) []byte {
	require.Zero(t, len(body)%16)
	block, err := aes.NewCipher(key)
	require.NoError(t, err)
	out := make([]byte, 16+len(body))
	_, _ = rand.Read(out[:16])
	cipher.NewCBCEncrypter(block, out[:16]).CryptBlocks(out[16:], body)
	return out
}

func TestDecryptDataCBCPadding(t *testing.T) {
	key := make([]byte, 16)
	_, _ = rand.Read(key)
	block := func(fill byte, last byte) []byte {
		b := bytes.Repeat([]byte{fill}, 16)
		b[15] = last
		return b
	}
	tests := []struct {
		name string
		body []byte
		want []byte
		err  error
	}{
		// XMLEnc 1.0 §5.2: only the last byte counts; the others are
		// arbitrary (ISO 10126 style, as Java and .NET produce).
		{"ok/iso10126-random-pad-bytes", append([]byte("hello world"), 0x13, 0x37, 0x99, 0xfe, 5), []byte("hello world"), nil},
		{"ok/pkcs7-pad", append([]byte("hello world"), 5, 5, 5, 5, 5), []byte("hello world"), nil},
		{"ok/full-pad-block", append(bytes.Repeat([]byte("a"), 16), block(0, 16)...), bytes.Repeat([]byte("a"), 16), nil},
		{"ok/pad-one", append(bytes.Repeat([]byte("b"), 15), 1), bytes.Repeat([]byte("b"), 15), nil},
		{"fail/pad-zero", block('a', 0), nil, ErrDecrypt},
		{"fail/pad-17", block('a', 17), nil, ErrDecrypt},
		{"fail/pad-255", block('a', 255), nil, ErrDecrypt},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecryptData(AlgAES128CBC, key, cbcRaw(t, key, tc.body))
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				assert.Equal(t, errDecrypt, err)
				assert.Nil(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}

	// Our own padding is PKCS#7, which every XMLEnc receiver accepts.
	cv, err := EncryptData(AlgAES128CBC, key, []byte("hello world"), nil)
	require.NoError(t, err)
	b, err := aes.NewCipher(key)
	require.NoError(t, err)
	raw := make([]byte, len(cv)-16)
	cipher.NewCBCDecrypter(b, cv[:16]).CryptBlocks(raw, cv[16:])
	assert.Equal(t, append([]byte("hello world"), 5, 5, 5, 5, 5), raw)
}

func TestDecryptDataFailures(t *testing.T) {
	k16, k32 := make([]byte, 16), make([]byte, 32)
	_, _ = rand.Read(k32)
	gcm, err := EncryptData(AlgAES256GCM, k32, []byte("<Body>secret</Body>"), nil)
	require.NoError(t, err)
	cbc, err := EncryptData(AlgAES256CBC, k32, []byte("<Body>secret</Body>"), nil)
	require.NoError(t, err)
	gcm128, err := EncryptData(AlgAES128GCM, k16, []byte("<Body>secret</Body>"), nil)
	require.NoError(t, err)
	cbc128, err := EncryptData(AlgAES128CBC, k16, []byte("<Body>secret</Body>"), nil)
	require.NoError(t, err)
	mod := func(b []byte, i int) []byte {
		c := append([]byte(nil), b...)
		c[i] ^= 1
		return c
	}
	other := append([]byte(nil), k32...)
	other[0] ^= 1
	tests := []struct {
		name string
		alg  string
		key  []byte
		cv   []byte
		err  error
	}{
		{"fail/gcm-tag-altered", AlgAES256GCM, k32, mod(gcm, len(gcm)-1), ErrDecrypt},
		{"fail/gcm-ciphertext-altered", AlgAES256GCM, k32, mod(gcm, 14), ErrDecrypt},
		{"fail/gcm-iv-altered", AlgAES256GCM, k32, mod(gcm, 0), ErrDecrypt},
		{"fail/gcm-tag-truncated", AlgAES256GCM, k32, gcm[:len(gcm)-4], ErrDecrypt},
		{"fail/gcm-shorter-than-iv-and-tag", AlgAES256GCM, k32, gcm[:27], ErrDecrypt},
		{"fail/gcm-empty", AlgAES256GCM, k32, nil, ErrDecrypt},
		{"fail/gcm-wrong-key", AlgAES256GCM, other, gcm, ErrDecrypt},
		// Substitution: a 16-byte key under aes256-gcm, or a 32-byte key
		// under aes128-gcm, is refused even before decrypting.
		{"fail/aes128-gcm-data-and-key-as-aes256-gcm", AlgAES256GCM, k16, gcm128, ErrDecrypt},
		{"fail/aes256-gcm-data-and-key-as-aes128-gcm", AlgAES128GCM, k32, gcm, ErrDecrypt},
		{"fail/aes128-cbc-data-and-key-as-aes256-cbc", AlgAES256CBC, k16, cbc128, ErrDecrypt},
		{"fail/cbc-not-block-multiple", AlgAES256CBC, k32, cbc[:len(cbc)-1], ErrDecrypt},
		{"fail/cbc-iv-only", AlgAES256CBC, k32, cbc[:16], ErrDecrypt},
		{"fail/cbc-empty", AlgAES256CBC, k32, nil, ErrDecrypt},
		{"fail/unknown-alg", "http://www.w3.org/2001/04/xmlenc#tripledes-cbc", k32, cbc, ErrUnsupportedAlgorithm},
		{"fail/key-wrap-uri-as-cipher", AlgKWAES256, k32, cbc, ErrUnsupportedAlgorithm},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecryptData(tc.alg, tc.key, tc.cv)
			require.ErrorIs(t, err, tc.err)
			assert.Nil(t, got)
			if tc.err == ErrDecrypt {
				assert.Equal(t, errDecrypt, err, "uniform: one error whatever failed")
			}
		})
	}
	got, err := DecryptData(AlgAES256GCM, k32, gcm)
	require.NoError(t, err)
	assert.Equal(t, "<Body>secret</Body>", string(got))
}

func TestEncryptDataErrors(t *testing.T) {
	tests := []struct {
		name string
		alg  string
		key  []byte
		rnd  io.Reader
		err  error
	}{
		{"fail/gcm-key-length", AlgAES256GCM, make([]byte, 16), nil, ErrAlgorithmKey},
		{"fail/cbc-key-length", AlgAES128CBC, make([]byte, 32), nil, ErrAlgorithmKey},
		{"fail/unknown-alg", "urn:x", make([]byte, 16), nil, ErrUnsupportedAlgorithm},
		{"fail/key-wrap-uri", AlgKWAES128, make([]byte, 16), nil, ErrUnsupportedAlgorithm},
		{"fail/gcm-short-randomness", AlgAES128GCM, make([]byte, 16), bytes.NewReader(make([]byte, 11)), ErrEncrypt},
		{"fail/cbc-short-randomness", AlgAES128CBC, make([]byte, 16), bytes.NewReader(make([]byte, 15)), ErrEncrypt},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cv, err := EncryptData(tc.alg, tc.key, []byte("x"), tc.rnd)
			require.ErrorIs(t, err, tc.err)
			assert.Nil(t, cv)
		})
	}
	_, err := EncryptData(AlgAES128CBC, make([]byte, 16), []byte("x"), iotest.ErrReader(errors.New("no entropy")))
	require.ErrorIs(t, err, ErrEncrypt)

	// The IV is the reader's first bytes, then the ciphertext follows.
	iv := bytes.Repeat([]byte{9}, 12)
	cv, err := EncryptData(AlgAES128GCM, make([]byte, 16), []byte("x"), bytes.NewReader(iv))
	require.NoError(t, err)
	assert.Equal(t, iv, cv[:12])
}

func TestDecryptDataAllocations(t *testing.T) {
	key := make([]byte, 32)
	for _, alg := range []string{AlgAES256GCM, AlgAES256CBC} {
		cv, err := EncryptData(alg, key, make([]byte, 4096), nil)
		require.NoError(t, err)
		allocs := testing.AllocsPerRun(20, func() {
			if _, err := DecryptData(alg, key, cv); err != nil {
				t.Fatal(err)
			}
		})
		// The cipher state and the one plaintext buffer; never a copy of
		// the ciphertext.
		assert.LessOrEqual(t, allocs, 4.0, alg)
	}
}

// TestNISTAESGCMVectors runs the NIST CAVP AES-GCM vectors converted by
// xmlsec (96-bit IV, no AAD, 128-bit tag): a vector with a .data file must
// decrypt to it, the others must fail.
func TestNISTAESGCMVectors(t *testing.T) {
	dir := testvectors.Path(t, "xmlsec/nist-aesgcm")
	keyRe := regexp.MustCompile(`(?s)<KeyName>([^<]+)</KeyName>\s*<KeyValue>\s*<AESKeyValue[^>]*>([^<]+)</AESKeyValue>`)
	encRe := regexp.MustCompile(`(?s)<EncryptionMethod Algorithm="([^"]+)"/>.*<KeyName>([^<]+)</KeyName>.*<CipherValue>\s*([^<]+?)\s*</CipherValue>`)
	var pass, fail int
	for _, bits := range []string{"128", "192", "256"} {
		keysXML, err := os.ReadFile(filepath.Join(dir, "keys-aes"+bits+"-gcm.xml"))
		require.NoError(t, err)
		keys := map[string][]byte{}
		for _, m := range keyRe.FindAllSubmatch(keysXML, -1) {
			k, err := base64.StdEncoding.DecodeString(string(m[2]))
			require.NoError(t, err)
			keys[string(m[1])] = k
		}
		require.NotEmpty(t, keys)
		files, err := filepath.Glob(filepath.Join(dir, "aes"+bits, "*.xml"))
		require.NoError(t, err)
		require.NotEmpty(t, files)
		for _, f := range files {
			xml, err := os.ReadFile(f)
			require.NoError(t, err)
			m := encRe.FindSubmatch(xml)
			require.NotNil(t, m, f)
			alg := string(m[1])
			key, ok := keys[string(m[2])]
			require.True(t, ok, "key %s", m[2])
			require.Len(t, key, KeySize(alg))
			cv, err := base64.StdEncoding.DecodeString(string(m[3]))
			require.NoError(t, err)
			got, err := DecryptData(alg, key, cv)
			data, rerr := os.ReadFile(strings.TrimSuffix(f, ".xml") + ".data")
			if rerr != nil {
				require.ErrorIs(t, err, ErrDecrypt, f)
				fail++
				continue
			}
			want, derr := base64.StdEncoding.DecodeString(strings.TrimSpace(string(data)))
			require.NoError(t, derr)
			require.NoError(t, err, f)
			require.Equal(t, want, got, f)
			pass++
		}
	}
	t.Logf("%d vectors decrypted, %d refused", pass, fail)
	assert.Positive(t, pass)
	assert.Positive(t, fail)
}

func BenchmarkDecryptData(b *testing.B) {
	key := make([]byte, 32)
	for _, alg := range []string{AlgAES256GCM, AlgAES256CBC} {
		cv, err := EncryptData(alg, key, make([]byte, 16*1024), nil)
		require.NoError(b, err)
		b.Run(AlgorithmLabel(alg)+"-16KiB", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(cv)))
			for b.Loop() {
				if _, err := DecryptData(alg, key, cv); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkEncryptDataGCM(b *testing.B) {
	key := make([]byte, 32)
	pt := make([]byte, 16*1024)
	b.ReportAllocs()
	b.SetBytes(int64(len(pt)))
	for b.Loop() {
		if _, err := EncryptData(AlgAES256GCM, key, pt, nil); err != nil {
			b.Fatal(err)
		}
	}
}
