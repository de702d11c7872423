package c14n

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/xmlscan"
)

const nsExcC14N = "http://www.w3.org/2001/10/xml-exc-c14n#"

// prefixListOf returns the PrefixList of the InclusiveNamespaces child of
// element i (a Transform or CanonicalizationMethod), nil if none.
func prefixListOf(t *testing.T, d *xmlscan.Document, i int) []string {
	for k := i + 1; k < d.Elements[i].Next; k++ {
		if e := &d.Elements[k]; e.Space == nsExcC14N && e.Local == "InclusiveNamespaces" {
			pl, err := ParsePrefixList(attr(d, k, "PrefixList"))
			require.NoError(t, err)
			return pl
		}
	}
	return nil
}

// TestWSS4J recomputes, for the messages WSS4J signed, every Reference
// digest (SHA-256 of the exc-c14n form with the Transform's PrefixList)
// and checks the RSA-SHA256 SignatureValue over the exc-c14n SignedInfo
// (with the CanonicalizationMethod's PrefixList) with the client
// certificate. The encrypted Body of signencr-gcm was signed before
// encryption, so its digest cannot be recomputed from the message.
func TestWSS4J(t *testing.T) {
	certPEM := readVector(t, "wss4j/keys/client.crt")
	blk, _ := pem.Decode(certPEM)
	require.NotNil(t, blk)
	cert, err := x509.ParseCertificate(blk.Bytes)
	require.NoError(t, err)
	pub := cert.PublicKey.(*rsa.PublicKey)

	for _, name := range []string{
		"sign-bst/0000.xml", "sign-bst/0001.xml",
		"sign-bst-soap12/0000.xml", "sign-bst-soap12/0001.xml",
		"sign-issuerserial/0000.xml", "sign-issuerserial/0001.xml",
		"signencr-gcm/0000.xml", "signencr-gcm/0001.xml",
	} {
		t.Run("ok/"+name, func(t *testing.T) {
			d := scan(t, readVector(t, "wss4j/"+name))
			si := find(d, xmlscan.NamespaceDSig, "SignedInfo", 0)
			require.Positive(t, si)
			checked := 0
			for n := 0; ; n++ {
				ref := find(d, xmlscan.NamespaceDSig, "Reference", n)
				if ref < 0 {
					break
				}
				uri := attr(d, ref, "URI")
				target := findID(d, uri[1:])
				require.Positive(t, target, uri)
				tr := find(d, xmlscan.NamespaceDSig, "Transform", n)
				require.Equal(t, AlgExcC14N, attr(d, tr, "Algorithm"))
				if d.Elements[target].Local == "Body" && find(d, xmlscan.NamespaceXEnc, "EncryptedData", 0) > target {
					t.Logf("%s: skip encrypted Body", uri)
					continue
				}
				h := sha256.New()
				require.NoError(t, ExclusiveTo(h, d, target, prefixListOf(t, d, tr), false))
				want := childText(d, ref, xmlscan.NamespaceDSig, "DigestValue")
				require.Equal(t, want, base64.StdEncoding.EncodeToString(h.Sum(nil)), "Reference %s", uri)
				t.Logf("%s %s digest ok", d.Elements[target].Local, uri)
				checked++
			}
			require.Positive(t, checked)

			cm := find(d, xmlscan.NamespaceDSig, "CanonicalizationMethod", 0)
			require.Equal(t, AlgExcC14N, attr(d, cm, "Algorithm"))
			c, err := Canonicalize(AlgExcC14N, d, si, prefixListOf(t, d, cm), nil)
			require.NoError(t, err)
			sig, err := base64.StdEncoding.DecodeString(childText(d, d.Elements[si].Parent, xmlscan.NamespaceDSig, "SignatureValue"))
			require.NoError(t, err)
			sum := sha256.Sum256(c)
			require.NoError(t, rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig), "SignedInfo c14n:\n%s", c)
		})
	}
}
