package attack

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/asn1"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/wssgw/wssgw/internal/c14n"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

const (
	valueTypeX509 = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-x509-token-profile-1.0#X509v3"
	encodingB64   = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-soap-message-security-1.0#Base64Binary"
)

// SelfIssuedResigner returns a Resigner that signs with a process-wide
// self-signed RSA certificate whose subject imitates a client
// ("O=Peer,CN=client"). now gives the Timestamp's Created (nil: time.Now).
func SelfIssuedResigner(now func() time.Time) (Resigner, error) {
	key, der, err := selfSigned()
	if err != nil {
		return nil, err
	}
	return KeyResigner(key, der, now), nil
}

// KeyResigner returns a Resigner that adds a wsse:Security header the way
// WSS4J's sign-bst profile does (without InclusiveNamespaces): a
// BinarySecurityToken holding certDER, a Signature (exc-c14n, SHA-256,
// RSA-SHA256 or ECDSA-SHA256 after the key type) over the Body and the
// Timestamp, and a Timestamp valid for five minutes from now(). The Body
// keeps its wsu:Id or gets one. With the trusted client key it makes
// messages a verifier accepts, which is how the tests show that the
// rejections of attacker-signed mutants are about the key.
func KeyResigner(key crypto.Signer, certDER []byte, now func() time.Time) Resigner {
	if now == nil {
		now = time.Now
	}
	return func(envelope []byte) ([]byte, error) {
		return resign(envelope, key, certDER, now().UTC())
	}
}

func resign(envelope []byte, key crypto.Signer, certDER []byte, t time.Time) ([]byte, error) {
	m := &msg{data: envelope, doc: &xmlscan.Document{}}
	if err := xmlscan.Scan(envelope, m.doc); err != nil {
		return nil, fmt.Errorf("attack: resign: %w", err)
	}
	root := m.doc.Root()
	if root.Local != "Envelope" || (root.Space != NSSOAP11 && root.Space != NSSOAP12) {
		return nil, errors.New("attack: resign: not a SOAP envelope")
	}
	soapNS := root.Space
	header, body := -1, -1
	for c := m.doc.FirstChild(0); c >= 0; c = m.doc.NextSibling(c) {
		if e := m.el(c); e.Space == soapNS && e.Local == "Header" && header < 0 {
			header = c
		} else if e.Space == soapNS && e.Local == "Body" && body < 0 {
			body = c
		}
	}
	if body < 0 {
		return nil, errors.New("attack: resign: no Body")
	}
	var sigAlg string
	switch key.Public().(type) {
	case *rsa.PublicKey:
		sigAlg = algRSASHA256
	case *ecdsa.PublicKey:
		sigAlg = algECDSASHA256
	default:
		return nil, errors.New("attack: resign: unsupported key type")
	}

	var bodyEdits []edit
	bodyID := m.attr(body, NSWSU, "Id")
	if bodyID == "" {
		bodyID = "id-attacker-body"
		pfx := "wsu"
		if uri, ok := m.doc.LookupPrefix(body, "wsu"); ok && uri != NSWSU {
			pfx = "wsuatk"
		}
		bodyEdits = append(bodyEdits, m.addAttrs(body, `xmlns:`+pfx+`="`+NSWSU+`" `+pfx+`:Id="`+bodyID+`"`))
	}
	mu := `xmlns:atksoap="` + soapNS + `" atksoap:mustUnderstand="1"`
	if soapNS == NSSOAP12 {
		mu = `xmlns:atksoap="` + soapNS + `" atksoap:mustUnderstand="true"`
	}
	const tsID, bstID = "TS-attacker-resigned", "X509-attacker-resigned"
	created := t.Format("2006-01-02T15:04:05.000Z")
	expires := t.Add(5 * time.Minute).Format("2006-01-02T15:04:05.000Z")
	ref := func(id, dv string) string {
		return `<ds:Reference URI="#` + id + `"><ds:Transforms><ds:Transform Algorithm="` + c14n.AlgExcC14N +
			`"/></ds:Transforms><ds:DigestMethod Algorithm="` + algSHA256 + `"/><ds:DigestValue>` + dv + `</ds:DigestValue></ds:Reference>`
	}
	security := func(d1, d2, sv string) string {
		return `<wsse:Security xmlns:wsse="` + NSWSSE + `" xmlns:wsu="` + NSWSU + `" ` + mu + `>` +
			`<wsse:BinarySecurityToken EncodingType="` + encodingB64 + `" ValueType="` + valueTypeX509 + `" wsu:Id="` + bstID + `">` +
			base64.StdEncoding.EncodeToString(certDER) + `</wsse:BinarySecurityToken>` +
			`<ds:Signature xmlns:ds="` + NSDS + `" Id="SIG-attacker-resigned"><ds:SignedInfo>` +
			`<ds:CanonicalizationMethod Algorithm="` + c14n.AlgExcC14N + `"/><ds:SignatureMethod Algorithm="` + sigAlg + `"/>` +
			ref(bodyID, d1) + ref(tsID, d2) + `</ds:SignedInfo><ds:SignatureValue>` + sv + `</ds:SignatureValue>` +
			`<ds:KeyInfo><wsse:SecurityTokenReference><wsse:Reference URI="#` + bstID + `" ValueType="` + valueTypeX509 +
			`"/></wsse:SecurityTokenReference></ds:KeyInfo></ds:Signature>` +
			`<wsu:Timestamp wsu:Id="` + tsID + `"><wsu:Created>` + created + `</wsu:Created><wsu:Expires>` + expires +
			`</wsu:Expires></wsu:Timestamp></wsse:Security>`
	}
	compose := func(d1, d2, sv string) []byte {
		edits := append([]edit(nil), bodyEdits...)
		if header >= 0 {
			edits = append(edits, m.prepend(header, security(d1, d2, sv)))
		} else {
			h := q(m, "Header")
			edits = append(edits, m.before(body, "<"+h+">"+security(d1, d2, sv)+"</"+h+">"))
		}
		return m.apply(edits...)
	}
	find := func(d *xmlscan.Document, space, local, id string) int {
		for i := range d.Elements {
			if e := &d.Elements[i]; e.Space == space && e.Local == local {
				if j := d.FindAttr(i, NSWSU, "Id"); j >= 0 && string(d.AttrValue(j, nil)) == id {
					return i
				}
			}
		}
		return -1
	}
	digest := func(d *xmlscan.Document, i int) (string, error) {
		h := sha256.New()
		if err := c14n.ExclusiveTo(h, d, i, nil, false); err != nil {
			return "", err
		}
		return base64.StdEncoding.EncodeToString(h.Sum(nil)), nil
	}

	// Pass 1: digests.
	d := &xmlscan.Document{}
	if err := xmlscan.Scan(compose("", "", ""), d); err != nil {
		return nil, fmt.Errorf("attack: resign: %w", err)
	}
	bi, ti := find(d, soapNS, "Body", bodyID), find(d, NSWSU, "Timestamp", tsID)
	if bi < 0 || ti < 0 {
		return nil, errors.New("attack: resign: Body or Timestamp not found after composing")
	}
	d1, err := digest(d, bi)
	if err != nil {
		return nil, err
	}
	d2, err := digest(d, ti)
	if err != nil {
		return nil, err
	}
	// Pass 2: the signature over the canonical SignedInfo.
	d = &xmlscan.Document{}
	if err := xmlscan.Scan(compose(d1, d2, ""), d); err != nil {
		return nil, fmt.Errorf("attack: resign: %w", err)
	}
	si := -1
	for i := range d.Elements {
		if e := &d.Elements[i]; e.Space == NSDS && e.Local == "SignedInfo" {
			si = i
		}
	}
	csi, err := c14n.Exclusive(d, si, nil, false, nil)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(csi)
	sig, err := key.Sign(rand.Reader, sum[:], crypto.SHA256)
	if err != nil {
		return nil, err
	}
	if pk, ok := key.Public().(*ecdsa.PublicKey); ok {
		var rs struct{ R, S *big.Int }
		if _, err := asn1.Unmarshal(sig, &rs); err != nil {
			return nil, err
		}
		n := (pk.Curve.Params().BitSize + 7) / 8
		raw := make([]byte, 2*n)
		rs.R.FillBytes(raw[:n])
		rs.S.FillBytes(raw[n:])
		sig = raw
	}
	return compose(d1, d2, base64.StdEncoding.EncodeToString(sig)), nil
}
