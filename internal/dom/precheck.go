package dom

import (
	"github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/soap"
	"github.com/wssgw/wssgw/internal/wss"
)

// precheck runs once per message, on the gate's document as received,
// before the tree is built and before any key is used: cheap before
// expensive (issue 13). Processing in header order (WSS 1.1 §5) would
// unwrap every EncryptedKey ahead of a Signature before learning that the
// message can never pass, and anyone with the gateway's certificate can
// make EncryptedKeys that unwrap. So what needs no key is settled first:
//
//   - a policy that needs a signature (wss.Policy.NeedsSignature) gets a
//     ds:Signature in our Security header, where the only signatures
//     verified are (finish; decrypted content may hold none,
//     checkPlaintext), and, when the Body must be signed, a ds:Reference
//     of one of them names the Body;
//   - every EncryptedKey's key transport and OAEP parameters and every
//     EncryptedData's cipher are on the allow-list (DESIGN.md §5.2): CBC
//     or RSA 1.5 are refused before any unwrap, not after it;
//   - an EncryptedData whose KeyInfo names an EncryptedKey names one that
//     is in the message (danglingKey).
//
// Everything it refuses was refused before too, only later; a message that
// can pass gets through unchanged, and then header order decides as
// before (decrypt-then-verify for WSS4J's encrypt-after-sign).
func (m *message) precheck() error {
	sec, err := m.findSecurity()
	if err != nil {
		return err
	}
	if m.p.NeedsSignature() {
		if err := m.signaturePresent(sec); err != nil {
			return err
		}
	}
	return m.encryptionAllowed()
}

// findSecurity returns our Security header (-1: none) from the gate's
// document, as locate finds it in the tree.
func (m *message) findSecurity() (int, error) {
	d := m.doc
	root := &d.Elements[0]
	switch {
	case root.Local == "Envelope" && root.Space == soap.NS11:
		m.version = soap.V11
	case root.Local == "Envelope" && root.Space == soap.NS12:
		m.version = soap.V12
	default:
		return -1, wss.Failf(wss.ReasonStructure, "root is not a SOAP Envelope")
	}
	h := d.FirstChild(0)
	if h < 0 || !m.is(h, root.Space, "Header") {
		return -1, nil
	}
	sec := -1
	for c := d.FirstChild(h); c >= 0; c = d.NextSibling(c) {
		if !m.is(c, nsWSSE, "Security") || !m.ours(c) {
			continue
		}
		if sec >= 0 {
			return -1, wss.Failf(wss.ReasonStructure, "two Security headers for this role")
		}
		sec = c
	}
	return sec, nil
}

// signaturePresent requires a ds:Signature child of Security header sec
// and, when the policy requires a signed Body, a ds:Reference in one of
// them whose URI names the Body: the one way a Reference covers it
// (resolve). The Body's attributes are never encrypted, so its id is in
// the received bytes.
func (m *message) signaturePresent(sec int) error {
	if sec < 0 || m.docChild(sec, nsDS, "Signature") < 0 {
		return wss.Failf(wss.ReasonMissing, "no signature")
	}
	if !m.p.NeedsSignedBody() {
		return nil
	}
	d := m.doc
	body := -1
	for c := d.FirstChild(0); c >= 0 && body < 0; c = d.NextSibling(c) {
		if m.is(c, d.Elements[0].Space, "Body") {
			body = c
		}
	}
	if body < 0 {
		return wss.Failf(wss.ReasonStructure, "no Body")
	}
	for c := d.FirstChild(sec); c >= 0; c = d.NextSibling(c) {
		if !m.is(c, nsDS, "Signature") {
			continue
		}
		for i := c + 1; i < d.Elements[c].Next; i++ {
			if !m.is(i, nsDS, "Reference") {
				continue
			}
			if t, err := m.resolve(m.attrOrEmpty(i, "URI")); err == nil && t == body {
				return nil
			}
		}
	}
	return wss.Failf(wss.ReasonPolicy, "the Body must be signed and no Reference names it")
}

func (m *message) attrOrEmpty(i int, local string) string {
	v, _ := m.attr(i, "", local)
	return v
}

// encryptionAllowed checks every EncryptedKey and EncryptedData of the
// message (the gate counted them) against the allow-list, and every
// EncryptedData's key name.
func (m *message) encryptionAllowed() error {
	d := m.doc
	if d.EncryptedKeys+d.EncryptedData == 0 {
		return nil
	}
	for i := range d.Elements {
		var err error
		switch {
		case m.is(i, nsXEnc, "EncryptedKey"):
			err = m.keyTransportAllowed(i)
		case m.is(i, nsXEnc, "EncryptedData"):
			err = m.dataAllowed(i)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// docChild is the first child element {space}local of element i, from the
// gate's document (the tree may not be built yet), or -1.
func (m *message) docChild(i int, space, local string) int {
	for c := m.doc.FirstChild(i); c >= 0; c = m.doc.NextSibling(c) {
		if m.is(c, space, local) {
			return c
		}
	}
	return -1
}

// keyTransportAllowed checks an EncryptedKey's EncryptionMethod as
// unwrapKey will: its Algorithm on the allow-list, and its DigestMethod
// and MGF parameters ones crypto.DecryptKey takes. A missing
// EncryptionMethod is unwrapKey's to refuse.
func (m *message) keyTransportAllowed(ek int) error {
	em := m.docChild(ek, nsXEnc, "EncryptionMethod")
	if em < 0 {
		return nil
	}
	alg := m.attrOrEmpty(em, "Algorithm")
	if err := m.allowed(wss.UseKeyTransport, alg); err != nil {
		return err
	}
	var digest, mgf string
	if c := m.docChild(em, nsDS, "DigestMethod"); c >= 0 {
		digest = m.attrOrEmpty(c, "Algorithm")
	}
	if c := m.docChild(em, nsXEnc11, "MGF"); c >= 0 {
		mgf = m.attrOrEmpty(c, "Algorithm")
	}
	if err := crypto.CheckKeyTransport(alg, digest, mgf); err != nil {
		return wss.Wrap(wss.ReasonAlgorithm, err, "EncryptedKey")
	}
	return nil
}

// dataAllowed checks an EncryptedData's cipher against the allow-list, as
// decryptData will, and that its KeyInfo names no missing key.
func (m *message) dataAllowed(ed int) error {
	if em := m.docChild(ed, nsXEnc, "EncryptionMethod"); em >= 0 {
		if err := m.allowed(wss.UseData, m.attrOrEmpty(em, "Algorithm")); err != nil {
			return err
		}
	}
	if ki := m.docChild(ed, nsDS, "KeyInfo"); ki >= 0 {
		return m.danglingKey(ki)
	}
	return nil
}

// keyName is what an EncryptedData's KeyInfo says of the EncryptedKey
// that holds its key.
type keyName struct {
	// named: the KeyInfo names an EncryptedKey, by uri (a
	// wsse:SecurityTokenReference/wsse:Reference or a ds:RetrievalMethod,
	// XMLEnc §3.5.1) or by sha1 (an EncryptedKeySHA1 KeyIdentifier, WSS
	// SOAP Message Security 1.1 §7.3).
	named bool
	uri   string
	sha1  []byte
}

// dataKeyName reads the key name of an EncryptedData's KeyInfo ki from the
// gate's document. A KeyInfo of another form names no EncryptedKey; the
// key comes from elsewhere or decryptData refuses it.
func (m *message) dataKeyName(ki int) (keyName, error) {
	d := m.doc
	c := d.FirstChild(ki)
	if c < 0 || d.NextSibling(c) >= 0 {
		return keyName{}, nil
	}
	switch {
	case m.is(c, nsDS, "RetrievalMethod"):
		return keyName{named: true, uri: m.attrOrEmpty(c, "URI")}, nil
	case m.is(c, nsWSSE, "SecurityTokenReference"):
		r := d.FirstChild(c)
		if r < 0 || d.NextSibling(r) >= 0 {
			return keyName{}, nil
		}
		switch {
		case m.is(r, nsWSSE, "Reference"):
			return keyName{named: true, uri: m.attrOrEmpty(r, "URI")}, nil
		case m.is(r, nsWSSE, "KeyIdentifier") && m.attrOrEmpty(r, "ValueType") == vtEncKeySHA1:
			v, err := b64(m.text(r))
			return keyName{named: true, sha1: v}, err
		}
	}
	return keyName{}, nil
}

// danglingKey refuses an EncryptedData KeyInfo that names, by URI, an
// element that is not in the message or is not an EncryptedKey. Before,
// one decrypted through an EncryptedKey's ReferenceList was decrypted
// without a look at its KeyInfo: a processor that follows the KeyInfo
// would have failed, or used another key. An EncryptedKeySHA1 names the
// key by its unwrapped ciphertext and is checked with the key (sameKey).
func (m *message) danglingKey(ki int) error {
	n, err := m.dataKeyName(ki)
	if err != nil || !n.named || n.sha1 != nil {
		return err
	}
	t, err := m.resolve(n.uri)
	if err != nil {
		return wss.Failf(wss.ReasonReference, "EncryptedData names an EncryptedKey that is not in the message")
	}
	if !m.is(t, nsXEnc, "EncryptedKey") {
		return wss.Failf(wss.ReasonReference, "EncryptedData names %s as its EncryptedKey", m.name(t))
	}
	return nil
}
