package c14n

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/testvectors"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// xmlsecDoc is signed by xmlsec1 (libxml2's canonicalizers). It packs the
// cases where canonicalizers disagree: attribute-value normalization of
// literal TAB/LF/CR against character references, CRLF line ends in text,
// comments and CDATA, '>' in text and attributes, quotes, non-ASCII,
// unused, redeclared, rebound and undeclared (xmlns="") namespaces,
// attributes in namespaces whose prefix order differs from URI order,
// QName-valued content (xsi:type="p:T", which exc-c14n ignores unless the
// prefix is listed), and inheritable xml:* attributes on the root.
const xmlsecDoc = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" +
	"<e:Env xmlns:e=\"urn:env\" xmlns=\"urn:default\" xmlns:p=\"urn:p\" xmlns:unused=\"urn:unused\" xml:lang=\"en\" xml:space=\"preserve\">\r\n" +
	"<m:Body xmlns:m=\"urn:m\" Id=\"b\" z=\"last\" a=\"tab\tlf\ncr\r\nref&#9;&#10;&#13;amp&amp;lt&lt;gt>quot&quot;\" p:attr=\"x\" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\">\r\n" +
	"  <child xsi:type=\"p:T\" b:z=\"1\" xmlns:b=\"urn:a\" c:y=\"2\" xmlns:c=\"urn:0\">text &amp; &lt; &gt; > &#13; &#xE9; \u00e9 \"q\" 'a'<![CDATA[ <c>\r\n & ]]></child>\r\n" +
	"  <!-- a\r\ncomment -->\n" +
	"  <p:x xmlns:p=\"urn:p2\" Id=\"x\"><empty/><p:y xmlns=\"\"><z xmlns=\"urn:default\"/></p:y><p:w xmlns:p=\"urn:p2\" xmlns:e=\"urn:env\"/></p:x>\n" +
	"  <q:r xmlns:q=\"urn:q\" q:a=\"1\" b=\"2\" xml:lang=\"de\"/>\n" +
	"</m:Body>\n" +
	"<ds:Signature xmlns:ds=\"http://www.w3.org/2000/09/xmldsig#\"><ds:SignedInfo>" +
	"<ds:CanonicalizationMethod Algorithm=\"http://www.w3.org/2001/10/xml-exc-c14n#\"><ec:InclusiveNamespaces xmlns:ec=\"http://www.w3.org/2001/10/xml-exc-c14n#\" PrefixList=\"e\"/></ds:CanonicalizationMethod>" +
	"<ds:SignatureMethod Algorithm=\"http://www.w3.org/2001/04/xmldsig-more#rsa-sha256\"/>" +
	"REFS</ds:SignedInfo><ds:SignatureValue/></ds:Signature>\n</e:Env>\n"

type xmlsecRef struct {
	uri, alg, prefixList string
}

var xmlsecRefs = []xmlsecRef{
	{"#b", AlgExcC14N, ""},
	{"#b", AlgExcC14N, "#default p xsi unused"},
	{"#b", AlgC14N10, ""},
	{"#b", AlgC14N11, ""},
	{"#xpointer(id('b'))", AlgExcC14NWithComments, ""},
	{"#xpointer(id('b'))", AlgC14N10WithComments, ""},
	{"#xpointer(id('b'))", AlgC14N11WithComments, ""},
	{"#x", AlgExcC14N, ""},
	{"#x", AlgExcC14N, "#default e"},
	{"#x", AlgC14N10, ""},
	{"#x", AlgC14N11, ""},
}

func (r xmlsecRef) xml() string {
	tr := `<ds:Transform Algorithm="` + r.alg + `"/>`
	if r.prefixList != "" {
		tr = `<ds:Transform Algorithm="` + r.alg + `"><ec:InclusiveNamespaces xmlns:ec="http://www.w3.org/2001/10/xml-exc-c14n#" PrefixList="` + r.prefixList + `"/></ds:Transform>`
	}
	return `<ds:Reference URI="` + r.uri + `"><ds:Transforms>` + tr + `</ds:Transforms>` +
		`<ds:DigestMethod Algorithm="http://www.w3.org/2001/04/xmlenc#sha256"/><ds:DigestValue/></ds:Reference>`
}

// TestXMLSec1 signs xmlsecDoc with xmlsec1 and checks that every
// DigestValue it wrote equals the digest of our canonical form, and that
// its SignatureValue verifies over our exc-c14n SignedInfo.
func TestXMLSec1(t *testing.T) {
	bin := xmlsec1(t)
	keyDir := testvectors.Path(t, "wss4j/keys")
	var refs strings.Builder
	for _, r := range xmlsecRefs {
		refs.WriteString(r.xml())
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.xml"), filepath.Join(dir, "out.xml")
	require.NoError(t, os.WriteFile(in, []byte(strings.Replace(xmlsecDoc, "REFS", refs.String(), 1)), 0o600))
	cmd := exec.Command(bin, "--sign",
		"--privkey-pem", filepath.Join(keyDir, "client.key")+","+filepath.Join(keyDir, "client.crt"),
		"--id-attr:Id", "urn:m:Body", "--id-attr:Id", "urn:p2:x", "--output", out, in)
	msg, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", msg)
	signed, err := os.ReadFile(out)
	require.NoError(t, err)
	d := scan(t, signed)

	for n, r := range xmlsecRefs {
		t.Run("ok/"+r.uri+"/"+r.alg+"/"+r.prefixList, func(t *testing.T) {
			ref := find(d, xmlscan.NamespaceDSig, "Reference", n)
			id := strings.TrimPrefix(r.uri, "#")
			if strings.HasPrefix(id, "xpointer(id('") {
				id = strings.TrimSuffix(strings.TrimPrefix(id, "xpointer(id('"), "'))")
			}
			target := findID(d, id)
			require.Positive(t, target)
			var pl []string
			if r.prefixList != "" {
				pl, err = ParsePrefixList(r.prefixList)
				require.NoError(t, err)
			}
			c, err := Canonicalize(r.alg, d, target, pl, nil)
			require.NoError(t, err)
			sum := sha256.Sum256(c)
			want := childText(d, ref, xmlscan.NamespaceDSig, "DigestValue")
			require.Equal(t, want, base64.StdEncoding.EncodeToString(sum[:]), "canonical form:\n%q", c)
		})
	}

	blk, _ := pem.Decode(readVector(t, "wss4j/keys/client.crt"))
	cert, err := x509.ParseCertificate(blk.Bytes)
	require.NoError(t, err)
	si := find(d, xmlscan.NamespaceDSig, "SignedInfo", 0)
	c, err := Exclusive(d, si, []string{"e"}, false, nil)
	require.NoError(t, err)
	sig, err := base64.StdEncoding.DecodeString(childText(d, d.Elements[si].Parent, xmlscan.NamespaceDSig, "SignatureValue"))
	require.NoError(t, err)
	sum := sha256.Sum256(c)
	require.NoError(t, rsa.VerifyPKCS1v15(cert.PublicKey.(*rsa.PublicKey), crypto.SHA256, sum[:], sig))
}
