package signer

import (
	"crypto/x509"
)

// plan holds everything the Security header needs except the values that
// are computed from the assembled message (DigestValue, SignatureValue).
type plan struct {
	r        *resolved
	soapNS   string
	soapPfx  string // prefix of the SOAP namespace for mustUnderstand
	soapDecl bool   // declare soapPfx on wsse:Security
	soap12   bool

	tsID, bstID, encBstID, ekID, edID, sigID, kiID, strID string
	created, expires                                      string
	confIDs                                               []string // one per SignatureConfirmation

	refs       []ref    // in SignedInfo order
	siPrefixes []string // PrefixList of the SignedInfo CanonicalizationMethod
	ekCipher   []byte   // the wrapped data key

	// Content of the SecurityTokenReferences naming the signer and the
	// recipient, rendered up front so that their errors surface early.
	sigToken, encToken buf
}

// ref is one ds:Reference: a same-document "#id" with its exc-c14n
// PrefixList, or an attachment "cid:" URI with its SwA transform.
type ref struct {
	id       string
	prefixes []string
	cid      string // Content-ID of an attachment (SwA Profile 1.1 §5.1)
	// transform is the one Transform of a cid reference (SwA §5.2).
	transform string
}

func (r ref) uri() string {
	if r.cid != "" {
		return "cid:" + escapeCID(r.cid)
	}
	return "#" + r.id
}

// security renders the whole wsse:Security header. digests (one per ref)
// and sigValue may be nil while they are not known yet: they only occur in
// ds:DigestValue and ds:SignatureValue, outside every signed element and
// outside SignedInfo's digested content respectively.
func (p *plan) security(digests [][]byte, sigValue []byte) []byte {
	return p.securityWith(func(b *buf) { p.signature(b, digests, sigValue) })
}

// securityWith renders the header with sig writing the signature's place:
// the ds:Signature itself, or what stands for it in a streamed response.
func (p *plan) securityWith(sig func(b *buf)) []byte {
	b := make(buf, 0, 4096)
	b.open("wsse:Security")
	b.attr("xmlns:wsse", nsWSSE)
	b.attr("xmlns:wsu", nsWSU)
	if p.soapDecl {
		b.attr("xmlns:"+p.soapPfx, p.soapNS)
	}
	if p.r.MustUnderstand {
		// SOAP 1.1 §4.2.3 uses "1"; SOAP 1.2 Part 1 §5.2.3 is xs:boolean,
		// and WSS4J writes "true" there.
		v := "1"
		if p.soap12 {
			v = "true"
		}
		b.attr(p.soapPfx+":mustUnderstand", v)
	}
	b.end()
	if p.tsID != "" {
		// WSS 1.1 §10: Created and Expires in UTC.
		b.open("wsu:Timestamp")
		b.attr("wsu:Id", p.tsID)
		b.end()
		b.elem("wsu:Created", p.created)
		b.elem("wsu:Expires", p.expires)
		b.close("wsu:Timestamp")
	}
	p.confirmations(&b)
	if p.bstID != "" {
		bst(&b, p.bstID, p.r.Certificate)
	}
	if p.encBstID != "" {
		bst(&b, p.encBstID, p.r.EncryptFor)
	}
	if p.ekID != "" {
		p.encryptedKey(&b)
	}
	sig(&b)
	b.close("wsse:Security")
	return b
}

// bst writes an X.509 v3 BinarySecurityToken (X.509 Token Profile 1.1
// §3.1; BSP 1.1 requires both EncodingType and ValueType).
func bst(b *buf, id string, c *x509.Certificate) {
	b.open("wsse:BinarySecurityToken")
	b.attr("EncodingType", encodingBase64)
	b.attr("ValueType", valueX509v3)
	b.attr("wsu:Id", id)
	b.end()
	b.b64raw(c.Raw)
	b.close("wsse:BinarySecurityToken")
}

// c14nMethod writes an exc-c14n CanonicalizationMethod or Transform with
// its InclusiveNamespaces (exc-c14n §3), omitted when the list is empty.
func (p *plan) c14nMethod(b *buf, name string, prefixes []string) {
	b.open(name)
	b.attr("Algorithm", algExcC14N)
	if !p.r.InclusivePrefixes || len(prefixes) == 0 {
		b.empty(name)
		return
	}
	b.end()
	b.open("ec:InclusiveNamespaces")
	b.attr("xmlns:ec", nsEC)
	list := prefixes[0]
	for _, s := range prefixes[1:] {
		list += " " + s
	}
	b.attr("PrefixList", list)
	b.empty("ec:InclusiveNamespaces")
	b.close(name)
}

// signature writes ds:Signature the way BSP 1.1 profiles it: exc-c14n for
// SignedInfo (R5404), each Reference with exc-c14n as its one Transform
// (R5423), and a KeyInfo holding exactly one SecurityTokenReference (R5417).
func (p *plan) signature(b *buf, digests [][]byte, sigValue []byte) {
	p.signatureStart(b)
	p.signatureContent(b, digests, sigValue)
	b.close("ds:Signature")
}

func (p *plan) signatureStart(b *buf) {
	b.open("ds:Signature")
	b.attr("xmlns:ds", nsDS)
	b.attr("Id", p.sigID)
	b.end()
}

// signatureContent writes the children of ds:Signature: what a streamed
// response sends as its last MIME part.
func (p *plan) signatureContent(b *buf, digests [][]byte, sigValue []byte) {
	b.open("ds:SignedInfo")
	b.end()
	p.c14nMethod(b, "ds:CanonicalizationMethod", p.siPrefixes)
	b.algo("ds:SignatureMethod", p.r.SignatureAlgorithm)
	for i, rf := range p.refs {
		b.open("ds:Reference")
		b.attr("URI", rf.uri())
		b.end()
		b.open("ds:Transforms")
		b.end()
		if rf.transform != "" {
			b.algo("ds:Transform", rf.transform)
		} else {
			p.c14nMethod(b, "ds:Transform", rf.prefixes)
		}
		b.close("ds:Transforms")
		b.algo("ds:DigestMethod", p.r.DigestAlgorithm)
		var dv []byte
		if digests != nil {
			dv = digests[i]
		}
		b.b64("ds:DigestValue", dv)
		b.close("ds:Reference")
	}
	b.close("ds:SignedInfo")
	b.b64("ds:SignatureValue", sigValue)
	b.open("ds:KeyInfo")
	b.attr("Id", p.kiID)
	b.end()
	b.open("wsse:SecurityTokenReference")
	b.attr("wsu:Id", p.strID)
	b.end()
	*b = append(*b, p.sigToken...)
	b.close("wsse:SecurityTokenReference")
	b.close("ds:KeyInfo")
}

// encryptedKey writes xenc:EncryptedKey with its ReferenceList (WSS 1.1
// §9.2 and XMLEnc §3.5.1: a ReferenceList inside the EncryptedKey says
// which EncryptedData the key decrypts, so a verifier can process it
// top-down). The DigestMethod spells out OAEP's SHA-1 default (XMLEnc
// §5.4.2) so that no reader has to guess it.
func (p *plan) encryptedKey(b *buf) {
	b.open("xenc:EncryptedKey")
	b.attr("xmlns:xenc", nsXEnc)
	b.attr("Id", p.ekID)
	b.end()
	b.open("xenc:EncryptionMethod")
	b.attr("Algorithm", p.r.KeyTransport)
	b.end()
	b.open("ds:DigestMethod")
	b.attr("xmlns:ds", nsDS)
	b.attr("Algorithm", algSHA1)
	b.empty("ds:DigestMethod")
	b.close("xenc:EncryptionMethod")
	b.open("ds:KeyInfo")
	b.attr("xmlns:ds", nsDS)
	b.end()
	b.open("wsse:SecurityTokenReference")
	b.end()
	*b = append(*b, p.encToken...)
	b.close("wsse:SecurityTokenReference")
	b.close("ds:KeyInfo")
	b.open("xenc:CipherData")
	b.end()
	b.b64("xenc:CipherValue", p.ekCipher)
	b.close("xenc:CipherData")
	b.open("xenc:ReferenceList")
	b.end()
	b.open("xenc:DataReference")
	b.attr("URI", "#"+p.edID)
	b.empty("xenc:DataReference")
	b.close("xenc:ReferenceList")
	b.close("xenc:EncryptedKey")
}

// encryptedDataHead writes an xenc:EncryptedData of type typ up to its
// open CipherData: the method and a KeyInfo pointing at the EncryptedKey.
// Outside the Security header (the Body) the wsse prefix must be declared.
func (p *plan) encryptedDataHead(b *buf, typ string, declareWSSE bool) {
	b.open("xenc:EncryptedData")
	b.attr("xmlns:xenc", nsXEnc)
	b.attr("Id", p.edID)
	b.attr("Type", typ)
	b.end()
	b.algo("xenc:EncryptionMethod", p.r.DataAlgorithm)
	b.open("ds:KeyInfo")
	b.attr("xmlns:ds", nsDS)
	b.end()
	b.open("wsse:SecurityTokenReference")
	if declareWSSE {
		b.attr("xmlns:wsse", nsWSSE)
	}
	b.attr("xmlns:wsse11", nsWSSE11)
	b.attr("wsse11:TokenType", valueEncryptedKey)
	b.end()
	b.open("wsse:Reference")
	b.attr("URI", "#"+p.ekID)
	b.empty("wsse:Reference")
	b.close("wsse:SecurityTokenReference")
	b.close("ds:KeyInfo")
	b.open("xenc:CipherData")
	b.end()
}

// encryptedData writes the xenc:EncryptedData that replaces the Body
// content (XMLEnc §3.5.2, Type #Content, which BSP 1.1 wants explicit). Its
// KeyInfo points at the EncryptedKey like WSS4J's (WSS 1.1 SOAP Message
// Security §7.7, token type #EncryptedKey).
func (p *plan) encryptedData(cipher []byte) []byte {
	b := make(buf, 0, len(cipher)*4/3+1024)
	p.encryptedDataHead(&b, typeContent, true)
	b.b64("xenc:CipherValue", cipher)
	b.close("xenc:CipherData")
	b.close("xenc:EncryptedData")
	return b
}
