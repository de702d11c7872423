package crypto

import (
	"crypto"
	"crypto/sha1" // legacy XMLDSig digest; the AllowList decides whether it is used
	"crypto/sha256"
	"crypto/sha512"
	"fmt"
	"hash"
)

// NewDigest returns a fresh hash for a DigestMethod URI. Only digest URIs
// are accepted: a signature or MAC URI names no DigestMethod.
func NewDigest(uri string) (hash.Hash, error) {
	a, ok := algs[uri]
	if !ok || a.class != ClassDigest {
		return nil, fmt.Errorf("crypto: digest %q: %w", clip(uri), ErrUnsupportedAlgorithm)
	}
	return newHash(a.hash), nil
}

// SumDigest is the digest of data under a DigestMethod URI, appended to
// buf[:0]: one call, no hash state on the heap (the template path digests
// every signed part of every message).
func SumDigest(uri string, data []byte, buf *[sha512.Size]byte) ([]byte, error) {
	a, ok := algs[uri]
	if !ok || a.class != ClassDigest {
		return nil, fmt.Errorf("crypto: digest %q: %w", clip(uri), ErrUnsupportedAlgorithm)
	}
	return digest(a.hash, data, buf), nil
}

// newHash calls the constructors directly rather than crypto.Hash.New, so
// the hashes cannot be missing from the binary (crypto.Hash.New panics for
// an unlinked hash).
func newHash(h crypto.Hash) hash.Hash {
	switch h {
	case crypto.SHA1:
		return sha1.New()
	case crypto.SHA224:
		return sha256.New224()
	case crypto.SHA256:
		return sha256.New()
	case crypto.SHA384:
		return sha512.New384()
	case crypto.SHA512:
		return sha512.New()
	}
	panic("crypto: hash not in the algorithm table: " + h.String())
}
