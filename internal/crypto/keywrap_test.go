package crypto

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	require.NoError(t, err)
	return b
}

// TestKeyWrapRFC3394 uses the test vectors of RFC 3394 §4.1-§4.6.
func TestKeyWrapRFC3394(t *testing.T) {
	const (
		kek128 = "000102030405060708090A0B0C0D0E0F"
		kek192 = "000102030405060708090A0B0C0D0E0F1011121314151617"
		kek256 = "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F"
		key128 = "00112233445566778899AABBCCDDEEFF"
		key192 = "00112233445566778899AABBCCDDEEFF0001020304050607"
		key256 = "00112233445566778899AABBCCDDEEFF000102030405060708090A0B0C0D0E0F"
	)
	tests := []struct{ name, kek, key, wrapped string }{
		{"ok/4.1-128-kek-128-key", kek128, key128, "1FA68B0A8112B447 AEF34BD8FB5A7B82 9D3E862371D2CFE5"},
		{"ok/4.2-192-kek-128-key", kek192, key128, "96778B25AE6CA435 F92B5B97C050AED2 468AB8A17AD84E5D"},
		{"ok/4.3-256-kek-128-key", kek256, key128, "64E8C3F9CE0F5BA2 63E9777905818A2A 93C8191E7D6E8AE7"},
		{"ok/4.4-192-kek-192-key", kek192, key192, "031D33264E15D332 68F24EC260743EDC E1C6C7DDEE725A93 6BA814915C6762D2"},
		{"ok/4.5-256-kek-192-key", kek256, key192, "A8F9BC1612C68B3F F6E6F4FBE30E71E4 769C8B80A32CB895 8CD5D17D6B254DA1"},
		{"ok/4.6-256-kek-256-key", kek256, key256, "28C9F404C4B810F4 CBCCB35CFB87F826 3F5786E2D80ED326 CBC7F0E71A99F43B FB988B9B7A02DD21"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kek, key, want := unhex(t, tc.kek), unhex(t, tc.key), unhex(t, tc.wrapped)
			got, err := WrapKey(kek, key)
			require.NoError(t, err)
			assert.Equal(t, want, got)
			back, err := UnwrapKey(kek, want)
			require.NoError(t, err)
			assert.Equal(t, key, back)
		})
	}
}

func TestUnwrapKeyFailures(t *testing.T) {
	kek := unhex(t, "000102030405060708090A0B0C0D0E0F")
	good := unhex(t, "1FA68B0A8112B447AEF34BD8FB5A7B829D3E862371D2CFE5")
	flip := func(i int) []byte {
		b := append([]byte(nil), good...)
		b[i] ^= 1
		return b
	}
	otherKEK := append([]byte(nil), kek...)
	otherKEK[0] ^= 1
	tests := []struct {
		name         string
		kek, wrapped []byte
	}{
		{"fail/integrity-block-altered", kek, flip(0)},
		{"fail/last-byte-altered", kek, flip(len(good) - 1)},
		{"fail/wrong-kek", otherKEK, good},
		{"fail/kek-192-for-128-wrap", unhex(t, "000102030405060708090A0B0C0D0E0F1011121314151617"), good},
		{"fail/too-short-one-block", kek, good[:16]},
		{"fail/not-multiple-of-8", kek, good[:23]},
		{"fail/empty", kek, nil},
		{"fail/kek-20-bytes", make([]byte, 20), good},
		{"fail/blocks-swapped", kek, append(append(append([]byte(nil), good[:8]...), good[16:]...), good[8:16]...)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			key, err := UnwrapKey(tc.kek, tc.wrapped)
			require.ErrorIs(t, err, ErrDecrypt)
			assert.Equal(t, errDecrypt, err, "one error for every failure")
			assert.Nil(t, key)
		})
	}
}

func TestWrapKeyFailures(t *testing.T) {
	tests := []struct {
		name     string
		kek, key []byte
	}{
		{"fail/key-8-bytes", make([]byte, 16), make([]byte, 8)},
		{"fail/key-not-multiple-of-8", make([]byte, 16), make([]byte, 20)},
		{"fail/kek-15-bytes", make([]byte, 15), make([]byte, 16)},
		{"fail/kek-empty", nil, make([]byte, 16)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := WrapKey(tc.kek, tc.key)
			require.ErrorIs(t, err, ErrUnsupportedKey)
		})
	}
}

func BenchmarkUnwrapKey(b *testing.B) {
	kek := make([]byte, 32)
	wrapped, err := WrapKey(kek, make([]byte, 32))
	require.NoError(b, err)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := UnwrapKey(kek, wrapped); err != nil {
			b.Fatal(err)
		}
	}
}
