package crypto

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/subtle"
	"fmt"
	"io"
)

// Sizes fixed by XMLEnc: AES-GCM has a 96-bit IV and a 128-bit tag (XMLEnc
// 1.1 §5.2.4); AES-CBC a 128-bit IV (XMLEnc 1.1 §5.2.2).
const (
	gcmIVSize  = 12
	gcmTagSize = 16
	cbcIVSize  = aes.BlockSize
)

var errNotBlockCipher = fmt.Errorf("crypto: not a block encryption algorithm: %w", ErrUnsupportedAlgorithm)

// KeySize is the key size in bytes of a block cipher URI (aes*-cbc,
// aes*-gcm) or the KEK size of a key wrap URI (kw-aes*), 0 for any other
// URI. DecryptKey takes it as keyLen so a transported key of the wrong
// length fails there.
func KeySize(alg string) int {
	a, ok := algs[alg]
	if !ok || (a.class != ClassBlockCipher && a.class != ClassKeyWrap) {
		return 0
	}
	return a.keySize
}

// DecryptData decrypts a decoded CipherValue with the EncryptionMethod alg.
// cipherValue is IV ‖ ciphertext, plus the 16-byte tag for GCM. The key
// length must be the algorithm's: a 16-byte key under aes256-gcm is an
// algorithm substitution, not a variant.
//
// Every failure (key or input length, GCM tag, CBC padding) is the same
// preallocated ErrDecrypt, so the error says nothing about which check
// failed (Jager–Somorovsky, "How to Break XML Encryption", CCS 2011). CBC
// has no integrity and stays an oracle through whatever parses the
// plaintext: it is legacy, off by default.
//
// The plaintext is a fresh slice, allocated once and decrypted in place.
func DecryptData(alg string, key, cipherValue []byte) ([]byte, error) {
	a, ok := algs[alg]
	if !ok || a.class != ClassBlockCipher {
		return nil, errNotBlockCipher
	}
	if len(key) != a.keySize {
		return nil, errDecrypt
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, errDecrypt
	}
	if a.gcm {
		return openGCM(block, cipherValue)
	}
	return openCBC(block, cipherValue)
}

func openGCM(block cipher.Block, cv []byte) ([]byte, error) {
	// Exact IV and tag sizes, checked before Open (research §1 C4).
	if len(cv) < gcmIVSize+gcmTagSize {
		return nil, errDecrypt
	}
	aead, err := cipher.NewGCM(block) // 12-byte nonce, 16-byte tag
	if err != nil {
		return nil, errDecrypt
	}
	out := make([]byte, 0, len(cv)-gcmIVSize-gcmTagSize)
	out, err = aead.Open(out, cv[:gcmIVSize], cv[gcmIVSize:], nil) // no AAD in XMLEnc
	if err != nil {
		return nil, errDecrypt
	}
	return out, nil
}

// openCBC removes XMLEnc padding (XMLEnc 1.0 §5.2, XMLEnc 1.1 §5.2): the
// last byte is the pad length, 1 to 16; the other pad bytes are arbitrary
// and not checked (checking them, as PKCS#7 does, would refuse valid
// ISO 10126-style ciphertexts from Java and .NET). The length check is
// branch-free so its timing does not depend on the plaintext.
func openCBC(block cipher.Block, cv []byte) ([]byte, error) {
	if len(cv) < cbcIVSize+aes.BlockSize || len(cv)%aes.BlockSize != 0 {
		return nil, errDecrypt
	}
	out := make([]byte, len(cv)-cbcIVSize)
	cipher.NewCBCDecrypter(block, cv[:cbcIVSize]).CryptBlocks(out, cv[cbcIVSize:])
	pad := int(out[len(out)-1])
	if subtle.ConstantTimeLessOrEq(1, pad)&subtle.ConstantTimeLessOrEq(pad, aes.BlockSize) != 1 {
		clear(out)
		return nil, errDecrypt
	}
	return out[:len(out)-pad], nil
}

// EncryptData encrypts plaintext with the EncryptionMethod alg and returns
// the CipherValue bytes DecryptData reads: a random IV from rnd
// (crypto/rand when nil), the ciphertext and, for GCM, the tag. CBC pads
// PKCS#7-style (every pad byte equals the length), which is valid XMLEnc
// padding and also passes receivers that check PKCS#7 strictly.
//
// A GCM IV must never repeat under one key (NIST SP 800-38D §8); random
// 96-bit IVs are safe far beyond the number of messages one key sees here.
func EncryptData(alg string, key, plaintext []byte, rnd io.Reader) ([]byte, error) {
	a, ok := algs[alg]
	if !ok || a.class != ClassBlockCipher {
		return nil, errNotBlockCipher
	}
	if len(key) != a.keySize {
		return nil, fmt.Errorf("crypto: %s with a %d-byte key: %w", a.label, len(key), ErrAlgorithmKey)
	}
	if rnd == nil {
		rnd = rand.Reader
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("crypto: %s: %w: %w", a.label, ErrAlgorithmKey, err)
	}
	if a.gcm {
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("crypto: %s: %w: %w", a.label, ErrEncrypt, err)
		}
		out := make([]byte, gcmIVSize, gcmIVSize+len(plaintext)+gcmTagSize)
		if _, err := io.ReadFull(rnd, out); err != nil {
			return nil, fmt.Errorf("crypto: %s IV: %w: %w", a.label, ErrEncrypt, err)
		}
		return aead.Seal(out, out[:gcmIVSize], plaintext, nil), nil
	}
	pad := aes.BlockSize - len(plaintext)%aes.BlockSize // 1..16, never 0
	out := make([]byte, cbcIVSize+len(plaintext)+pad)
	if _, err := io.ReadFull(rnd, out[:cbcIVSize]); err != nil {
		return nil, fmt.Errorf("crypto: %s IV: %w: %w", a.label, ErrEncrypt, err)
	}
	body := out[cbcIVSize:]
	copy(body, plaintext)
	for i := len(plaintext); i < len(body); i++ {
		body[i] = byte(pad)
	}
	cipher.NewCBCEncrypter(block, out[:cbcIVSize]).CryptBlocks(body, body)
	return out, nil
}
