package crypto

import (
	"crypto/aes"
	"crypto/subtle"
	"encoding/binary"
	"fmt"
)

// kwIV is the RFC 3394 §2.2.3.1 default initial value.
var kwIV = [8]byte{0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6, 0xA6}

// WrapKey wraps key (a multiple of 8 bytes, at least 16) under the AES key
// encryption key kek (16, 24 or 32 bytes) with RFC 3394 §2.2.1, the
// kw-aes* algorithms of XMLEnc 1.1 §5.7.2. Which kw-aes* URI goes with
// which kek size is the caller's (KeySize). Bad sizes wrap ErrUnsupportedKey.
func WrapKey(kek, key []byte) ([]byte, error) {
	if len(key) < 16 || len(key)%8 != 0 {
		return nil, fmt.Errorf("crypto: key wrap: key of %d bytes: %w", len(key), ErrUnsupportedKey)
	}
	if !aesKeySize(len(kek)) {
		return nil, fmt.Errorf("crypto: key wrap: KEK of %d bytes: %w", len(kek), ErrUnsupportedKey)
	}
	block, err := aes.NewCipher(kek)
	if err != nil {
		return nil, fmt.Errorf("crypto: key wrap: %w: %w", ErrUnsupportedKey, err)
	}
	n := len(key) / 8
	out := make([]byte, 8+len(key)) // A ‖ R[1..n], computed in place
	copy(out, kwIV[:])
	copy(out[8:], key)
	var b [16]byte
	for j := range 6 {
		for i := 1; i <= n; i++ {
			r := out[8*i : 8*i+8]
			copy(b[:8], out[:8])
			copy(b[8:], r)
			block.Encrypt(b[:], b[:])
			t := uint64(n*j + i)
			binary.BigEndian.PutUint64(out[:8], binary.BigEndian.Uint64(b[:8])^t)
			copy(r, b[8:])
		}
	}
	clear(b[:])
	return out, nil
}

// UnwrapKey reverses WrapKey (RFC 3394 §2.2.2) and checks the integrity
// value against the default IV in constant time (§2.2.3). Every failure,
// sizes included, is ErrDecrypt: the unwrapped key is secret, and a
// distinguishable error would be an oracle like CBC padding.
func UnwrapKey(kek, wrapped []byte) ([]byte, error) {
	if len(wrapped) < 24 || len(wrapped)%8 != 0 || !aesKeySize(len(kek)) {
		return nil, errDecrypt
	}
	block, err := aes.NewCipher(kek)
	if err != nil {
		return nil, errDecrypt
	}
	n := len(wrapped)/8 - 1
	out := make([]byte, len(wrapped)-8) // R[1..n]
	copy(out, wrapped[8:])
	var a [8]byte
	copy(a[:], wrapped[:8])
	var b [16]byte
	for j := 5; j >= 0; j-- {
		for i := n; i >= 1; i-- {
			r := out[8*(i-1) : 8*i]
			t := uint64(n*j + i)
			binary.BigEndian.PutUint64(b[:8], binary.BigEndian.Uint64(a[:])^t)
			copy(b[8:], r)
			block.Decrypt(b[:], b[:])
			copy(a[:], b[:8])
			copy(r, b[8:])
		}
	}
	clear(b[:])
	if subtle.ConstantTimeCompare(a[:], kwIV[:]) != 1 {
		clear(out)
		return nil, errDecrypt
	}
	return out, nil
}

func aesKeySize(n int) bool { return n == 16 || n == 24 || n == 32 }
