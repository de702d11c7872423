package signer

// The algorithm choices this package offers, on top of internal/crypto's
// Sign, EncryptKey and EncryptData.

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"fmt"
	"hash"

	wcrypto "github.com/wssgw/wssgw/internal/crypto"
)

// checkDigest admits the DigestMethods this package produces (XMLDSig
// §6.2, RFC 9231 §2.1); internal/crypto's algorithm table makes their
// hashes (newDigest). SHA-1 is not offered: BSP 1.1 allows it but nothing
// new should produce it.
func checkDigest(uri string) error {
	switch uri {
	case algSHA256, algSHA384, algSHA512:
		return nil
	}
	return fmt.Errorf("%w: digest algorithm %q", ErrOptions, uri)
}

// newDigest returns a fresh hash for a DigestMethod that checkDigest
// admitted (options do so before anything is signed), so the error of
// wcrypto.NewDigest cannot happen here: a panic marks the broken
// invariant.
func newDigest(uri string) hash.Hash {
	h, err := wcrypto.NewDigest(uri)
	if err != nil {
		panic("signer: digest not admitted by checkDigest: " + err.Error())
	}
	return h
}

// sigAlg describes a SignatureMethod.
type sigAlg struct {
	hash crypto.Hash // 0 for Ed25519 (PureEdDSA signs the message itself)
	kind string      // "rsa", "ecdsa", "ed25519"
}

var sigAlgs = map[string]sigAlg{
	algRSASHA256:   {crypto.SHA256, "rsa"},
	algRSASHA384:   {crypto.SHA384, "rsa"},
	algRSASHA512:   {crypto.SHA512, "rsa"},
	algECDSASHA256: {crypto.SHA256, "ecdsa"},
	algECDSASHA384: {crypto.SHA384, "ecdsa"},
	algECDSASHA512: {crypto.SHA512, "ecdsa"},
	algEd25519:     {0, "ed25519"},
}

// defaultSignatureAlgorithm picks the usual method for a key: RSA-SHA256,
// ECDSA with the hash matching the curve strength (FIPS 186-5 §6.4: P-256
// with SHA-256, P-384 with SHA-384, P-521 with SHA-512), Ed25519.
func defaultSignatureAlgorithm(pub crypto.PublicKey) (string, error) {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return algRSASHA256, nil
	case *ecdsa.PublicKey:
		switch k.Curve.Params().BitSize {
		case 256:
			return algECDSASHA256, nil
		case 384:
			return algECDSASHA384, nil
		case 521:
			return algECDSASHA512, nil
		}
		return "", fmt.Errorf("%w: unsupported curve %s", ErrKey, k.Curve.Params().Name)
	case ed25519.PublicKey:
		return algEd25519, nil
	}
	return "", fmt.Errorf("%w: unsupported key type %T", ErrKey, pub)
}

// signSignedInfo signs the canonical SignedInfo with internal/crypto's
// Sign (ECDSA as raw r‖s, XMLDSig 1.1 §6.4.3), after checking that the
// method belongs to the key's family so that the error says which option
// is wrong. Going through crypto.Signer keeps HSM/KMS keys usable.
func signSignedInfo(alg string, s crypto.Signer, c14nSignedInfo []byte) ([]byte, error) {
	a, ok := sigAlgs[alg]
	if !ok {
		return nil, fmt.Errorf("%w: signature algorithm %q", ErrOptions, alg)
	}
	pub := s.Public()
	var fits bool
	switch pub.(type) {
	case *rsa.PublicKey:
		fits = a.kind == "rsa"
	case *ecdsa.PublicKey:
		fits = a.kind == "ecdsa"
	case ed25519.PublicKey:
		fits = a.kind == "ed25519"
	}
	if !fits {
		return nil, fmt.Errorf("%w: %s does not fit a %T", ErrKey, alg, pub)
	}
	return wcrypto.Sign(alg, s, c14nSignedInfo)
}

// dataKeySize is the AES key length of an XMLEnc 1.1 §5.2.4 GCM algorithm.
func dataKeySize(alg string) (int, error) {
	switch alg {
	case algAES128GCM, algAES192GCM, algAES256GCM:
		return wcrypto.KeySize(alg), nil
	}
	return 0, fmt.Errorf("%w: data encryption algorithm %q", ErrOptions, alg)
}

// encryptKey wraps the data key for the recipient. rsa-oaep-mgf1p is
// XMLEnc 1.0 §5.4.2 with SHA-1 for both the OAEP digest and MGF1, which is
// what WSS4J emits and BSP 1.1 (R5621) allows; SHA-1 is not a weakness
// inside OAEP, which needs no collision resistance.
func encryptKey(alg string, pub crypto.PublicKey, key []byte) ([]byte, error) {
	// Both OAEP forms with SHA-1 and MGF1-SHA1, which the EncryptedKey's
	// DigestMethod states and XMLEnc 1.1 §5.5.2 takes as the default MGF.
	if alg != algRSAOAEPMGF1P && alg != wcrypto.AlgRSAOAEP {
		return nil, fmt.Errorf("%w: key transport algorithm %q", ErrOptions, alg)
	}
	k, ok := pub.(*rsa.PublicKey)
	if !ok {
		return nil, fmt.Errorf("%w: key transport needs an RSA recipient, have %T", ErrKey, pub)
	}
	return wcrypto.EncryptKey(alg, algSHA1, "", k, key)
}
