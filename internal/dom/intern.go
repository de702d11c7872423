package dom

import (
	"github.com/wssgw/wssgw/internal/c14n"
	"github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// knownValues holds the attribute values a message repeats from a fixed
// vocabulary: algorithm URIs, value and encoding types. A value read from
// the gate's bytes and found here is returned as the constant, so reading
// a Reference's DigestMethod or Transform costs no allocation; any other
// value is a fresh string as before. Interning returns an equal string, so
// no check reads anything different (issue 14: the DOM engine's cost per
// fresh-shape message; the canonical SignedInfo's Algorithm attributes
// were about a sixth of its allocations).
var knownValues = func() map[string]string {
	m := map[string]string{}
	add := func(vs ...string) {
		for _, v := range vs {
			m[v] = v
		}
	}
	add(crypto.DefaultAllowed()...)
	add(crypto.AlgDigestSHA1, crypto.AlgDigestSHA224, crypto.AlgRSASHA1, crypto.AlgRSASHA224,
		crypto.AlgECDSASHA1, crypto.AlgECDSASHA224, crypto.AlgHMACSHA1, crypto.AlgHMACSHA224,
		crypto.AlgRSA15, crypto.AlgAES128CBC, crypto.AlgAES192CBC, crypto.AlgAES256CBC, crypto.AlgAES192GCM,
		crypto.AlgMGF1SHA1, crypto.AlgMGF1SHA224, crypto.AlgMGF1SHA256, crypto.AlgMGF1SHA384, crypto.AlgMGF1SHA512)
	add(c14n.AlgC14N10, c14n.AlgC14N10WithComments, c14n.AlgC14N11, c14n.AlgC14N11WithComments,
		c14n.AlgExcC14N, c14n.AlgExcC14NWithComments, trSTR)
	add(vtX509v3, vtPKIPath, vtSKI, vtThumbprint, vtEncKeySHA1, vtEncryptedKey, encBase64,
		typeElement, typeContent)
	return m
}()

// intern is string(v), without allocating when v is a knownValues value.
func intern(v []byte) string {
	if s, ok := knownValues[string(v)]; ok { // the lookup does not allocate
		return s
	}
	return string(v)
}

// attrString is the normalized value of attribute j of d as a string,
// interned.
func attrString(d *xmlscan.Document, j int) string {
	return intern(d.AttrValue(j, nil))
}
