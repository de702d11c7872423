package crypto

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1" // legacy XMLDSig signature hash; the AllowList decides whether it is used
	"crypto/sha256"
	"crypto/sha512"
	"encoding/asn1"
	"fmt"
	"hash"
	"math/big"
)

// HMACKey is a shared secret for the hmac-* SignatureMethods. It is a named
// type, not []byte, so that a MAC key is always an explicit configuration
// choice: VerifySignatureSHA256 never derives one from a certificate or public
// key (xml-crypto GHSA-c27r-x354-4m68 keyed HMAC with the RSA public key).
type HMACKey []byte

// One preallocated error per outcome keeps the failure path free of
// allocations and of detail an attacker could use.
var (
	errBadSignature = fmt.Errorf("crypto: %w", ErrSignature)
	errNotSignature = fmt.Errorf("crypto: not a signature algorithm: %w", ErrUnsupportedAlgorithm)
)

func sigAlg(alg string) (algInfo, error) {
	a, ok := algs[alg]
	if !ok || a.class != ClassSignature {
		return algInfo{}, errNotSignature
	}
	return a, nil
}

func keyMismatch(a algInfo, key any) error {
	return fmt.Errorf("crypto: %s with key of type %T: %w", a.label, key, ErrAlgorithmKey)
}

// VerifySignatureSHA256 checks sigValue (the decoded SignatureValue) over
// signedInfo (the canonical SignedInfo bytes) with the SignatureMethod alg.
// sum is the SHA-256 of signedInfo, which the engines compute anyway for
// the replay key: the SHA-256 RSA, RSA-PSS and ECDSA methods verify that
// digest instead of hashing the same bytes again.
//
// The key type must match the algorithm family: *rsa.PublicKey for rsa-*
// and RSA-PSS, *ecdsa.PublicKey (P-256, P-384, P-521) for ecdsa-*,
// ed25519.PublicKey for Ed25519 and HMACKey for hmac-*. Anything else,
// private keys included, is ErrAlgorithmKey: an HMAC URI must never be
// verified with public key bytes (GHSA-c27r-x354-4m68), and an attacker
// must not pick how a trusted key is used (XMLDSig 1.1 §6.1 binds the
// algorithm to the key).
//
// Encodings are strict: ECDSA is raw r‖s, each half exactly the curve's
// byte size (XMLDSig 1.1 §6.4.3; DER is refused); HMAC is the full output
// (truncated MACs, CVE-2009-0217, are refused; see HMACOutputBits). A bad
// signature is ErrSignature; an unknown URI is ErrUnsupportedAlgorithm.
func VerifySignatureSHA256(alg string, key any, signedInfo []byte, sum *[sha256.Size]byte, sigValue []byte) error {
	a, err := sigAlg(alg)
	if err != nil {
		return err
	}
	var pre []byte
	if a.hash == crypto.SHA256 {
		pre = sum[:]
	}
	return verifySignature(a, key, signedInfo, pre, sigValue)
}

// verifySignature verifies with the digest of signedInfo pre when given.
func verifySignature(a algInfo, key any, signedInfo, pre, sigValue []byte) error {
	hashed := pre
	if hashed == nil && (a.sig == sigRSA || a.sig == sigRSAPSS || a.sig == sigECDSA) {
		// Declared here: it escapes, and a caller with the digest (pre)
		// should not pay its allocation (issue 14).
		var buf [sha512.Size]byte
		hashed = digest(a.hash, signedInfo, &buf)
	}
	switch a.sig {
	case sigRSA, sigRSAPSS:
		pub, ok := key.(*rsa.PublicKey)
		if !ok || pub == nil {
			return keyMismatch(a, key)
		}
		d := hashed
		var err error
		if a.sig == sigRSA {
			err = verifyPKCS1v15(pub, a.hash, d, sigValue)
		} else {
			err = rsa.VerifyPSS(pub, a.hash, d, sigValue, pssOptions(a.hash))
		}
		if err != nil {
			return errBadSignature
		}
		return nil
	case sigECDSA:
		pub, ok := key.(*ecdsa.PublicKey)
		if !ok || pub == nil {
			return keyMismatch(a, key)
		}
		n := curveBytes(pub.Curve)
		if n == 0 {
			return fmt.Errorf("crypto: %s curve %s: %w", a.label, curveName(pub.Curve), ErrUnsupportedKey)
		}
		if len(sigValue) != 2*n {
			return errBadSignature
		}
		r := new(big.Int).SetBytes(sigValue[:n])
		s := new(big.Int).SetBytes(sigValue[n:])
		if !ecdsa.Verify(pub, hashed, r, s) {
			return errBadSignature
		}
		return nil
	case sigEd25519:
		pub, ok := key.(ed25519.PublicKey)
		if !ok || len(pub) != ed25519.PublicKeySize { // ed25519.Verify panics on other sizes
			return keyMismatch(a, key)
		}
		if len(sigValue) != ed25519.SignatureSize || !ed25519.Verify(pub, signedInfo, sigValue) {
			return errBadSignature
		}
		return nil
	case sigHMAC:
		k, ok := key.(HMACKey)
		if !ok || len(k) == 0 {
			return keyMismatch(a, key)
		}
		// Full length only: a shorter SignatureValue is a truncated MAC
		// (CVE-2009-0217), whatever HMACOutputLength claims.
		if len(sigValue) != a.hash.Size() {
			return errBadSignature
		}
		var buf [sha512.Size]byte
		if !hmac.Equal(macSum(a.hash, k, signedInfo, &buf), sigValue) { // constant time
			return errBadSignature
		}
		return nil
	}
	return errNotSignature
}

// Sign signs signedInfo (canonical SignedInfo bytes) with alg, producing the
// SignatureValue bytes VerifySignatureSHA256 accepts (ECDSA as raw r‖s). key is a
// crypto.Signer whose public key matches the algorithm family (a KeyPair's
// Signer, which may be a hardware key) or, for hmac-*, an HMACKey.
func Sign(alg string, key any, signedInfo []byte) ([]byte, error) {
	a, err := sigAlg(alg)
	if err != nil {
		return nil, err
	}
	if a.sig == sigHMAC {
		k, ok := key.(HMACKey)
		if !ok || len(k) == 0 {
			return nil, keyMismatch(a, key)
		}
		var buf [sha512.Size]byte
		return append([]byte(nil), macSum(a.hash, k, signedInfo, &buf)...), nil
	}
	signer, ok := key.(crypto.Signer)
	if !ok || signer == nil {
		return nil, keyMismatch(a, key)
	}
	var buf [sha512.Size]byte
	switch pub := signer.Public().(type) {
	case *rsa.PublicKey:
		var opts crypto.SignerOpts = a.hash
		switch a.sig {
		case sigRSA:
		case sigRSAPSS:
			opts = pssOptions(a.hash)
		default:
			return nil, keyMismatch(a, key)
		}
		sig, err := signer.Sign(rand.Reader, digest(a.hash, signedInfo, &buf), opts)
		if err != nil {
			return nil, fmt.Errorf("crypto: %s sign: %w: %w", a.label, ErrAlgorithmKey, err)
		}
		return sig, nil
	case *ecdsa.PublicKey:
		if a.sig != sigECDSA {
			return nil, keyMismatch(a, key)
		}
		n := curveBytes(pub.Curve)
		if n == 0 {
			return nil, fmt.Errorf("crypto: %s curve %s: %w", a.label, curveName(pub.Curve), ErrUnsupportedKey)
		}
		r, s, err := ecdsaSign(signer, digest(a.hash, signedInfo, &buf), a.hash)
		if err != nil {
			return nil, fmt.Errorf("crypto: %s sign: %w: %w", a.label, ErrAlgorithmKey, err)
		}
		out := make([]byte, 2*n)
		r.FillBytes(out[:n])
		s.FillBytes(out[n:])
		return out, nil
	case ed25519.PublicKey:
		if a.sig != sigEd25519 {
			return nil, keyMismatch(a, key)
		}
		// PureEdDSA: the message itself, no prehash (crypto.Hash(0)).
		sig, err := signer.Sign(rand.Reader, signedInfo, crypto.Hash(0))
		if err != nil {
			return nil, fmt.Errorf("crypto: %s sign: %w: %w", a.label, ErrAlgorithmKey, err)
		}
		return sig, nil
	}
	return nil, keyMismatch(a, key)
}

// ecdsaSign returns r and s. A crypto.Signer returns them ASN.1-encoded
// (SEC 1); XMLDSig wants them raw, so decode strictly (no trailing data).
func ecdsaSign(signer crypto.Signer, d []byte, h crypto.Hash) (r, s *big.Int, err error) {
	if priv, ok := signer.(*ecdsa.PrivateKey); ok {
		return ecdsa.Sign(rand.Reader, priv, d)
	}
	der, err := signer.Sign(rand.Reader, d, h)
	if err != nil {
		return nil, nil, err
	}
	var v struct{ R, S *big.Int }
	rest, err := asn1.Unmarshal(der, &v)
	if err != nil || len(rest) != 0 || v.R == nil || v.S == nil || v.R.Sign() <= 0 || v.S.Sign() <= 0 {
		return nil, nil, fmt.Errorf("malformed ECDSA signature from signer")
	}
	return v.R, v.S, nil
}

// HMACOutputBits is the full output length in bits of an hmac-* URI, 0 for
// any other URI. The caller refuses an HMACOutputLength that differs from
// it (CVE-2009-0217; the BSP forbids the element altogether, R5401).
func HMACOutputBits(alg string) int {
	a, ok := algs[alg]
	if !ok || a.sig != sigHMAC {
		return 0
	}
	return 8 * a.hash.Size()
}

// SignatureKeyBits is the strength-relevant size of a signing or MAC key:
// RSA modulus bits, curve bits for ECDSA, 256 for Ed25519, 8×length for an
// HMACKey; 0 for anything else. Private keys and crypto.Signers report
// their public key's size. Policy minimums are the caller's.
func SignatureKeyBits(key any) int {
	switch k := key.(type) {
	case *rsa.PublicKey:
		if k == nil || k.N == nil {
			return 0
		}
		return k.N.BitLen()
	case *ecdsa.PublicKey:
		if k == nil || k.Curve == nil {
			return 0
		}
		return k.Curve.Params().BitSize
	case ed25519.PublicKey:
		if len(k) != ed25519.PublicKeySize {
			return 0
		}
		return 256
	case HMACKey:
		return 8 * len(k)
	case crypto.Signer:
		if pub := k.Public(); pub != nil {
			if _, again := pub.(crypto.Signer); !again {
				return SignatureKeyBits(pub)
			}
		}
	}
	return 0
}

// pssOptions is RSASSA-PSS without parameters (RFC 6931 §2.3.10): MGF1
// with the signature hash (Go always uses the same hash for MGF1) and a
// salt as long as the hash, on both sides, so a verifier never accepts a
// salt length other than the one the URI implies.
func pssOptions(h crypto.Hash) *rsa.PSSOptions {
	return &rsa.PSSOptions{SaltLength: h.Size(), Hash: h}
}

// curveBytes is the byte size of one half of a raw ECDSA signature on the
// curves XMLDSig 1.1 §6.4.3 requires (P-256, P-384, P-521), 0 otherwise.
func curveBytes(c elliptic.Curve) int {
	switch c {
	case elliptic.P256():
		return 32
	case elliptic.P384():
		return 48
	case elliptic.P521():
		return 66
	}
	return 0
}

func curveName(c elliptic.Curve) string {
	if c == nil {
		return "<nil>"
	}
	return c.Params().Name
}

// digest hashes data into buf without allocating.
func digest(h crypto.Hash, data []byte, buf *[sha512.Size]byte) []byte {
	switch h {
	case crypto.SHA1:
		s := sha1.Sum(data)
		return append(buf[:0], s[:]...)
	case crypto.SHA224:
		s := sha256.Sum224(data)
		return append(buf[:0], s[:]...)
	case crypto.SHA256:
		s := sha256.Sum256(data)
		return append(buf[:0], s[:]...)
	case crypto.SHA384:
		s := sha512.Sum384(data)
		return append(buf[:0], s[:]...)
	case crypto.SHA512:
		s := sha512.Sum512(data)
		return append(buf[:0], s[:]...)
	}
	panic("crypto: hash not in the algorithm table: " + h.String())
}

func macSum(h crypto.Hash, key, data []byte, buf *[sha512.Size]byte) []byte {
	m := hmac.New(func() hash.Hash { return newHash(h) }, key)
	m.Write(data)
	return m.Sum(buf[:0])
}

// CanonicalSignatureValue returns the one form of a verified SignatureValue
// that every valid variant of it shares, for replay keys. ECDSA signatures
// are malleable: if (r, s) verifies, so does (r, N−s) (SEC 1 §4.1.4 checks
// only 0 < s < N), and anyone can compute it without the private key. A
// replay key over the raw octets would then treat the flipped copy of an
// accepted message as a new message, so the value is returned with the low
// s, the form Bitcoin's BIP 62 and libsecp256k1 normalize to. RSA
// PKCS #1 v1.5 and RSA-PSS values (a fixed-length integer below the
// modulus), Ed25519 (S < L checked by ed25519.Verify) and HMAC have a
// single encoding per signature and are returned as they are. key is the
// key the value was verified with; value is not modified.
func CanonicalSignatureValue(key any, value []byte) []byte {
	pub, ok := key.(*ecdsa.PublicKey)
	if !ok || pub == nil || pub.Curve == nil {
		return value
	}
	n := curveBytes(pub.Curve)
	if n == 0 || len(value) != 2*n {
		return value
	}
	order := pub.Curve.Params().N
	s := new(big.Int).SetBytes(value[n:])
	half := new(big.Int).Rsh(order, 1)
	if s.Cmp(half) <= 0 {
		return value
	}
	out := make([]byte, 2*n)
	copy(out, value[:n])
	s.Sub(order, s).FillBytes(out[n:])
	return out
}
