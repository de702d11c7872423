package crypto

import (
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDigest(t *testing.T) {
	// FIPS 180-4 example "abc" (NIST CSRC examples).
	tests := []struct {
		name string
		uri  string
		want string // hex; "" = unsupported
	}{
		{"ok/sha1", AlgDigestSHA1, "a9993e364706816aba3e25717850c26c9cd0d89d"},
		{"ok/sha224", AlgDigestSHA224, "23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7"},
		{"ok/sha256", AlgDigestSHA256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{"ok/sha384", AlgDigestSHA384, "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7"},
		{"ok/sha512", AlgDigestSHA512, "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"},
		{"fail/md5", "http://www.w3.org/2001/04/xmldsig-more#md5", ""},
		{"fail/ripemd160", "http://www.w3.org/2001/04/xmlenc#ripemd160", ""},
		{"fail/signature-uri", AlgRSASHA256, ""},
		{"fail/hmac-uri", AlgHMACSHA256, ""},
		{"fail/mgf-uri", AlgMGF1SHA256, ""},
		{"fail/sha3-not-implemented", "http://www.w3.org/2007/05/xmldsig-more#sha3-256", ""},
		{"fail/empty", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf [64]byte
			sum, sumErr := SumDigest(tc.uri, []byte("abc"), &buf)
			h, err := NewDigest(tc.uri)
			if tc.want == "" {
				require.ErrorIs(t, sumErr, ErrUnsupportedAlgorithm)
				require.ErrorIs(t, err, ErrUnsupportedAlgorithm)
				assert.Nil(t, h)
				return
			}
			require.NoError(t, sumErr)
			assert.Equal(t, tc.want, hex.EncodeToString(sum), "SumDigest")
			require.NoError(t, err)
			h.Write([]byte("ab"))
			h.Write([]byte("c"))
			assert.Equal(t, tc.want, hex.EncodeToString(h.Sum(nil)))
			assert.Equal(t, len(tc.want)/2, h.Size())
		})
	}
}

func BenchmarkDigestSHA256(b *testing.B) {
	data := make([]byte, 4096)
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		h, err := NewDigest(AlgDigestSHA256)
		if err != nil {
			b.Fatal(err)
		}
		h.Write(data)
		_ = h.Sum(nil)
	}
}
