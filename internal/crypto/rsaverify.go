package crypto

import (
	"crypto"
	"crypto/rsa"
	"crypto/subtle"
	"math/bits"
	"sync"

	"filippo.io/bigmod"
)

// crypto/rsa derives the Montgomery parameters of the modulus (R² mod N)
// on every verification: 40 % of an RSA-2048 verify. A partner signs with
// the same key for months, so they are kept per key here, and the public
// operation s^e mod N and the PKCS #1 v1.5 encoding check (RFC 8017 §8.2.2)
// run on them with filippo.io/bigmod, the same arithmetic crypto/rsa uses,
// exported. A key enters the cache only after crypto/rsa has verified a
// signature with it, so every key check of crypto/rsa (size, exponent,
// modulus form) has passed; signatures themselves are checked the same
// way (length, s < N, the whole encoded message compared).

// rsaVerifier is one key's cached modulus.
type rsaVerifier struct {
	n *bigmod.Modulus
	e uint
	k int // modulus bytes
}

// rsaVerifiers is bounded: keys are pointers the callers keep (parsed
// certificates), and a flood of fresh keys only empties it.
var rsaVerifiers = struct {
	sync.RWMutex
	m map[*rsa.PublicKey]*rsaVerifier
}{m: map[*rsa.PublicKey]*rsaVerifier{}}

const maxRSAVerifiers = 1024

// verifyPKCS1v15 is rsa.VerifyPKCS1v15 with the key's modulus cached.
func verifyPKCS1v15(pub *rsa.PublicKey, h crypto.Hash, hashed, sig []byte) error {
	if fipsEnabled() { // only the validated module in FIPS mode (rsa_fips.go)
		return rsa.VerifyPKCS1v15(pub, h, hashed, sig)
	}
	rsaVerifiers.RLock()
	v := rsaVerifiers.m[pub]
	rsaVerifiers.RUnlock()
	if v == nil {
		if err := rsa.VerifyPKCS1v15(pub, h, hashed, sig); err != nil {
			return err
		}
		cacheRSAVerifier(pub)
		return nil
	}
	if !v.verify(h, hashed, sig) {
		return errBadSignature
	}
	return nil
}

func cacheRSAVerifier(pub *rsa.PublicKey) {
	n, err := bigmod.NewModulus(pub.N.Bytes())
	if err != nil || pub.E < 2 || pub.E > 1<<31-1 || n.Size() > maxRSABytes {
		return // crypto/rsa accepted it, so this does not happen; stay on crypto/rsa if it does
	}
	v := &rsaVerifier{n: n, e: uint(pub.E), k: (pub.N.BitLen() + 7) / 8}
	rsaVerifiers.Lock()
	if len(rsaVerifiers.m) >= maxRSAVerifiers {
		clear(rsaVerifiers.m)
	}
	rsaVerifiers.m[pub] = v
	rsaVerifiers.Unlock()
}

func (v *rsaVerifier) verify(h crypto.Hash, hashed, sig []byte) bool {
	prefix, ok := digestInfoPrefix[h]
	if !ok || len(hashed) != h.Size() || len(sig) != v.k || v.k < len(prefix)+len(hashed)+11 {
		return false
	}
	s, err := bigmod.NewNat().SetBytes(sig, v.n) // refuses s >= N
	if err != nil {
		return false
	}
	var buf [maxRSABytes]byte
	em := natBytes(bigmod.NewNat().ExpShortVarTime(s, v.e, v.n), buf[:v.k])
	if em == nil {
		return false
	}
	// EM = 0x00 || 0x01 || PS (0xff…) || 0x00 || DigestInfo prefix || H
	t := v.k - len(prefix) - len(hashed)
	ok = em[0] == 0 && em[1] == 1 && em[t-1] == 0
	for _, b := range em[2 : t-1] {
		ok = ok && b == 0xff
	}
	return ok && subtle.ConstantTimeCompare(em[t:t+len(prefix)], prefix) == 1 &&
		subtle.ConstantTimeCompare(em[t+len(prefix):], hashed) == 1
}

// maxRSABytes bounds the moduli whose encoded message is written on the
// stack (natBytes): 8192 bits, more than any key a policy admits.
const maxRSABytes = 1024

// natBytes is x.Bytes(m) written into out (len(out) == m.Size()) instead
// of a new slice: a verification allocated it (issue 14). nil when out is
// too short, which the callers' size checks exclude.
func natBytes(x *bigmod.Nat, out []byte) []byte {
	i := len(out)
	for _, limb := range x.Bits() {
		for range bits.UintSize / 8 {
			i--
			if i < 0 {
				if limb == 0 {
					break
				}
				return nil
			}
			out[i] = byte(limb)
			limb >>= 8
		}
	}
	clear(out[:max(i, 0)])
	return out
}

// digestInfoPrefix is the DER of DigestInfo up to the hash value (RFC 8017
// §9.2, note 1), for the hashes the allowlist can name.
var digestInfoPrefix = map[crypto.Hash][]byte{
	crypto.SHA1:   {0x30, 0x21, 0x30, 0x09, 0x06, 0x05, 0x2b, 0x0e, 0x03, 0x02, 0x1a, 0x05, 0x00, 0x04, 0x14},
	crypto.SHA224: {0x30, 0x2d, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x04, 0x05, 0x00, 0x04, 0x1c},
	crypto.SHA256: {0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20},
	crypto.SHA384: {0x30, 0x41, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x02, 0x05, 0x00, 0x04, 0x30},
	crypto.SHA512: {0x30, 0x51, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x03, 0x05, 0x00, 0x04, 0x40},
}
