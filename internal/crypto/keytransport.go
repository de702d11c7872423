package crypto

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
)

var (
	errDecrypt         = fmt.Errorf("crypto: %w", ErrDecrypt)
	errNotKeyTransport = fmt.Errorf("crypto: not a key transport algorithm: %w", ErrUnsupportedAlgorithm)
)

// DecryptKey decrypts the CipherValue of an EncryptedKey with the
// EncryptionMethod alg and returns the transported key.
//
// oaepDigest is the URI of the EncryptionMethod's ds:DigestMethod and mgf
// the URI of its xenc11:MGF, "" when absent. OAEPparams is not supported:
// no label is ever used, so an EncryptedKey carrying one fails to decrypt.
//
//   - AlgRSAOAEPMGF1P: OAEP hash oaepDigest (SHA-1 when ""); the mask is
//     always MGF1 with SHA-1 whatever the DigestMethod (XMLEnc 1.0 §5.4.2,
//     XMLEnc 1.1 §5.5.2), so mgf must be "" or AlgMGF1SHA1.
//   - AlgRSAOAEP: OAEP hash oaepDigest (SHA-1 when ""), mask MGF1 with the
//     hash of mgf (AlgMGF1SHA1 when "") (XMLEnc 1.1 §5.5.2).
//   - AlgRSA15: only with an *rsa.PrivateKey (or a backend's key, Backend)
//     and keyLen > 0. Any failure
//     yields a random key of keyLen bytes and no error, in constant time,
//     so the padding check is no Bleichenbacher oracle (WSS4J
//     CVE-2011-2487, CVE-2015-0226; "random filling" of RFC 3218): the bad key then
//     fails the data decryption like any other tampering.
//
// Every OAEP failure, and a decrypted key whose length is not keyLen (when
// keyLen > 0), is the one preallocated ErrDecrypt without detail. Bad
// parameters (unknown URIs, a non-RSA key) fail before any decryption with
// ErrUnsupportedAlgorithm or ErrAlgorithmKey: they do not depend on the
// ciphertext.
func DecryptKey(alg, oaepDigest, mgf string, priv crypto.Decrypter, ciphertext []byte, keyLen int) ([]byte, error) {
	if err := CheckKeyTransport(alg, oaepDigest, mgf); err != nil {
		return nil, err
	}
	a := algs[alg]
	if priv == nil {
		return nil, fmt.Errorf("crypto: %s with no key: %w", a.label, ErrAlgorithmKey)
	}
	if _, ok := priv.Public().(*rsa.PublicKey); !ok {
		return nil, keyMismatch(a, priv)
	}
	if alg == AlgRSA15 {
		return decryptRSA15(a, priv, ciphertext, keyLen)
	}
	opts, err := oaepOptions(alg, oaepDigest, mgf)
	if err != nil {
		return nil, err
	}
	key, err := priv.Decrypt(rand.Reader, ciphertext, opts)
	if err != nil {
		return nil, errDecrypt
	}
	if keyLen > 0 && len(key) != keyLen {
		clear(key)
		return nil, errDecrypt
	}
	return key, nil
}

// CheckKeyTransport checks what DecryptKey checks of its parameters
// before any private-key operation: alg is a key transport, and
// oaepDigest and mgf are parameters it takes (for OAEP, a supported digest
// and MGF; none for RSA 1.5). It needs no key or ciphertext, so a receiver
// can check every EncryptedKey of a message before it unwraps any.
func CheckKeyTransport(alg, oaepDigest, mgf string) error {
	a, ok := algs[alg]
	if !ok || a.class != ClassKeyTransport {
		return errNotKeyTransport
	}
	if alg == AlgRSA15 {
		if oaepDigest != "" || mgf != "" {
			return fmt.Errorf("crypto: %s takes no DigestMethod or MGF: %w", a.label, ErrUnsupportedAlgorithm)
		}
		return nil
	}
	_, err := oaepOptions(alg, oaepDigest, mgf)
	return err
}

// sessionKeyDecrypter is a private key that does PKCS#1 v1.5 session-key
// decryption with implicit rejection itself, as
// rsa.DecryptPKCS1v15SessionKey does: key is overwritten with the message
// only when the padding is valid and the message is len(key) bytes, in
// constant time. The OpenSSL backend's keys are one (backend_openssl.go).
type sessionKeyDecrypter interface {
	decryptSessionKey(ciphertext, key []byte)
}

// fillRandom fills the key RSA 1.5 answers when the ciphertext is bad.
// A variable so that the backends' differential test can make the answer
// reproducible and compare it across backends.
var fillRandom = func(b []byte) { _, _ = rand.Read(b) } // never fails (crypto/rand, Go 1.24+)

func decryptRSA15(a algInfo, priv crypto.Decrypter, ciphertext []byte, keyLen int) ([]byte, error) {
	// The countermeasure needs an implicit-rejection primitive, crypto/rsa's
	// or a backend's, which a generic crypto.Decrypter (an HSM) does not
	// offer: its PKCS#1 v1.5 errors would be an oracle.
	rk, isRSA := priv.(*rsa.PrivateKey)
	sk, isSession := priv.(sessionKeyDecrypter)
	if !isRSA && !isSession {
		return nil, fmt.Errorf("crypto: %s needs an in-memory RSA private key, got %T: %w", a.label, priv, ErrAlgorithmKey)
	}
	if keyLen <= 0 {
		// Without the expected length there is no random key to fall back
		// on; this depends only on the caller, not on the ciphertext.
		return nil, fmt.Errorf("crypto: %s needs the expected key length: %w", a.label, ErrDecrypt)
	}
	key := make([]byte, keyLen)
	fillRandom(key)
	if isSession {
		sk.decryptSessionKey(ciphertext, key)
		return key, nil
	}
	// DecryptPKCS1v15SessionKey is deprecated with all of PKCS#1 v1.5
	// encryption (golang/go#75302); it is still the only constant-time
	// implicit-rejection decryption, and rsa-1_5 is legacy and off by
	// default. Its error (wrong ciphertext length) is ignored on purpose:
	// the random key is the answer to every failure.
	//lint:ignore SA1019 rsa-1_5 is an opt-in legacy algorithm; no non-deprecated API does implicit rejection
	_ = rsa.DecryptPKCS1v15SessionKey(nil, rk, ciphertext, key)
	return key, nil
}

// EncryptKey encrypts key for pub with the EncryptionMethod alg and the
// same oaepDigest/mgf parameters as DecryptKey. AlgRSA15 is refused: wssgw
// never produces PKCS#1 v1.5 ciphertexts (Go deprecated them,
// golang/go#75302; Bleichenbacher).
func EncryptKey(alg, oaepDigest, mgf string, pub *rsa.PublicKey, key []byte) ([]byte, error) {
	a, ok := algs[alg]
	if !ok || a.class != ClassKeyTransport {
		return nil, errNotKeyTransport
	}
	if alg == AlgRSA15 {
		return nil, fmt.Errorf("crypto: %s refused for encryption: %w", a.label, ErrUnsupportedAlgorithm)
	}
	if pub == nil {
		return nil, fmt.Errorf("crypto: %s with no key: %w", a.label, ErrAlgorithmKey)
	}
	opts, err := oaepOptions(alg, oaepDigest, mgf)
	if err != nil {
		return nil, err
	}
	out, err := rsa.EncryptOAEPWithOptions(rand.Reader, pub, key, opts)
	if err != nil {
		// The only causes are a key too short for the hash and the
		// message, or an invalid public key.
		return nil, fmt.Errorf("crypto: %s encrypt: %w: %w", a.label, ErrAlgorithmKey, err)
	}
	return out, nil
}

// oaepOptions maps the URIs to the OAEP hash and MGF1 hash. The label is
// always empty: OAEPparams is not supported.
func oaepOptions(alg, oaepDigest, mgf string) (*rsa.OAEPOptions, error) {
	h := crypto.SHA1 // XMLEnc 1.1 §5.5.2: DigestMethod defaults to SHA-1
	if oaepDigest != "" {
		d, ok := algs[oaepDigest]
		if !ok || d.class != ClassDigest {
			return nil, fmt.Errorf("crypto: OAEP digest %q: %w", clip(oaepDigest), ErrUnsupportedAlgorithm)
		}
		h = d.hash
	}
	mh := crypto.SHA1 // mgf1p fixes MGF1-SHA1; xenc11 rsa-oaep defaults to it
	if mgf != "" {
		m, ok := algs[mgf]
		if !ok || m.class != ClassMGF || (alg == AlgRSAOAEPMGF1P && mgf != AlgMGF1SHA1) {
			return nil, fmt.Errorf("crypto: %s MGF %q: %w", AlgorithmLabel(alg), clip(mgf), ErrUnsupportedAlgorithm)
		}
		mh = m.hash
	}
	return &rsa.OAEPOptions{Hash: h, MGFHash: mh}, nil
}
