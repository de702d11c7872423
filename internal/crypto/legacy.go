package crypto

import (
	"crypto"
	"slices"
)

// Legacy reports whether uri is an algorithm kept only for partners that
// have not migrated: SHA-1 digests and signatures (SHAttered, 2017; RFC
// 9231 §1 keeps them for compatibility only), RSA-1.5 key transport
// (Bleichenbacher) and CBC data encryption (no integrity, the
// Jager–Somorovsky oracle). OAEP with SHA-1 MGF1 is not: it needs no
// collision resistance. The classification is derived from the algorithm
// table, so a new algorithm is classified where it is defined.
func Legacy(uri string) bool {
	a, ok := algs[uri]
	if !ok {
		return false
	}
	switch a.class {
	case ClassDigest, ClassSignature:
		return a.hash == crypto.SHA1
	case ClassKeyTransport:
		return uri == AlgRSA15
	case ClassBlockCipher:
		return !a.gcm
	}
	return false
}

// LegacyLabels lists the labels (AlgorithmLabel) of every Legacy
// algorithm, sorted.
func LegacyLabels() []string {
	var out []string
	for uri, a := range algs {
		if Legacy(uri) {
			out = append(out, a.label)
		}
	}
	slices.Sort(out)
	return out
}
