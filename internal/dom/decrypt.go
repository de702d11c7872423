package dom

import (
	"bytes"
	"crypto/sha1"
	"crypto/subtle"
	"time"

	"github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/soap"
	"github.com/wssgw/wssgw/internal/wss"
)

// encryptedKey unwraps an xenc:EncryptedKey for one of the policy's
// decryption keys and decrypts the EncryptedData its ReferenceList names.
func (m *message) encryptedKey(ek int) error {
	key, alg, uris, err := m.unwrapKey(ek, 0)
	if err != nil {
		return err
	}
	return m.decryptAll(uris, key, alg)
}

// unwrapKey unwraps an xenc:EncryptedKey for one of the policy's decryption
// keys, records the key for later references, and returns it with its key
// transport algorithm and the DataReference URIs of its ReferenceList.
// keyLen is the key size the data needs; 0 takes it from the first
// DataReference.
func (m *message) unwrapKey(ek, keyLen int) (key []byte, alg string, uris []string, err error) {
	var method, ki, cd, rl = -1, -1, -1, -1
	for _, c := range m.children(ek) {
		switch {
		case m.is(c, nsXEnc, "EncryptionMethod") && method < 0:
			method = c
		case m.is(c, nsDS, "KeyInfo") && ki < 0 && cd < 0:
			ki = c
		case m.is(c, nsXEnc, "CipherData") && cd < 0:
			cd = c
		case m.is(c, nsXEnc, "ReferenceList") && cd >= 0 && rl < 0:
			rl = c
		default:
			return nil, "", nil, wss.Failf(wss.ReasonStructure, "unexpected %s in EncryptedKey", m.name(c))
		}
	}
	if method < 0 || cd < 0 {
		return nil, "", nil, wss.Failf(wss.ReasonStructure, "EncryptedKey without EncryptionMethod or CipherData")
	}
	alg, oaepDigest, mgf, err := m.keyTransport(method)
	if err != nil {
		return nil, "", nil, err
	}
	kp, err := m.recipient(ki)
	if err != nil {
		return nil, "", nil, err
	}
	cv, err := m.cipherValue(cd)
	if err != nil {
		return nil, "", nil, err
	}
	uris = m.dataReferences(rl)
	dec, ok := kp.Decrypter()
	if !ok {
		return nil, "", nil, wss.Failf(wss.ReasonToken, "decryption key cannot decrypt")
	}
	if keyLen == 0 {
		keyLen = m.keyLen(uris)
	}
	key, err = crypto.DecryptKey(alg, oaepDigest, mgf, dec, cv, keyLen)
	if err != nil {
		return nil, "", nil, wss.Wrap(wss.ReasonDecrypt, err, "EncryptedKey")
	}
	if id, ok := m.attr(ek, "", "Id"); ok {
		m.setKey("#"+id, key)
	}
	// EncryptedKeySHA1 is the SHA-1 of the encrypted key octets (WSS SOAP
	// Message Security 1.1 §7.3).
	sum := sha1.Sum(cv)
	m.setKey("sha1:"+string(sum[:]), key)
	return key, alg, uris, nil
}

// keyTransport checks an EncryptedKey's EncryptionMethod. The OAEP
// DigestMethod and MGF are parameters of the key transport, not message
// digests, so they are recorded but not held to the digest allow-list.
func (m *message) keyTransport(method int) (alg, digest, mgf string, err error) {
	alg, _ = m.attr(method, "", "Algorithm")
	if err := m.allow(wss.UseKeyTransport, alg); err != nil {
		return "", "", "", err
	}
	for _, c := range m.children(method) {
		switch {
		case m.is(c, nsDS, "DigestMethod") && digest == "":
			digest, _ = m.attr(c, "", "Algorithm")
		case m.is(c, nsXEnc11, "MGF") && mgf == "":
			mgf, _ = m.attr(c, "", "Algorithm")
		default:
			// No OAEPparams: a label no peer sends is only attack surface.
			return "", "", "", wss.Failf(wss.ReasonStructure, "unexpected %s in EncryptionMethod", m.name(c))
		}
	}
	return alg, digest, mgf, nil
}

// recipient finds the policy decryption key an EncryptedKey's KeyInfo
// names. Without KeyInfo, the only key is taken. The keys' certificates
// are compared through their kept lookup values (certKeys) and the
// reference's issuer is parsed once, not once per key.
func (m *message) recipient(ki int) (*crypto.KeyPair, error) {
	keys := m.p.DecryptionKeys()
	if ki < 0 {
		if len(keys) == 1 {
			return keys[0], nil
		}
		return nil, wss.Failf(wss.ReasonToken, "EncryptedKey names no recipient")
	}
	ref, err := m.keyInfo(ki)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		if refMatches(ref, m.engine.certKeys(k.Certificate)) {
			return k, nil
		}
	}
	return nil, wss.Failf(wss.ReasonToken, "EncryptedKey for a certificate that is not ours")
}

func (m *message) cipherValue(cd int) ([]byte, error) {
	c, err := m.only(cd, "CipherData")
	if err != nil {
		return nil, err
	}
	if !m.is(c, nsXEnc, "CipherValue") {
		// No CipherReference here (only attachment EncryptedData have
		// one, decryptAttachment): nothing is fetched (DESIGN.md §5.8).
		return nil, wss.Failf(wss.ReasonStructure, "CipherData without CipherValue")
	}
	if m.xopValue(c) {
		return m.xopCipherValue(c + 1)
	}
	// The bytes, not a string copy: DecodeBase64 then decodes in place
	// of the message's text without first copying it to strip white
	// space (a 1 MiB Body's CipherValue is 1.4 MB).
	return wss.DecodeBase64(m.doc.Text(c, nil))
}

// dataReferences lists the DataReference URIs of a ReferenceList (-1: none).
func (m *message) dataReferences(rl int) []string {
	if rl < 0 {
		return nil
	}
	var uris []string
	for _, c := range m.children(rl) {
		uri, _ := m.attr(c, "", "URI")
		if !m.is(c, nsXEnc, "DataReference") {
			uri = "" // a KeyReference or anything else fails to resolve
		}
		uris = append(uris, uri)
	}
	return uris
}

// keyLen is the key size the first referenced EncryptedData needs, so that
// an RSA 1.5 failure yields a random key of the right size.
func (m *message) keyLen(uris []string) int {
	if len(uris) == 0 {
		return 0
	}
	ed, err := m.resolve(uris[0])
	if err != nil {
		return 0
	}
	em := m.child(ed, nsXEnc, "EncryptionMethod")
	if em < 0 {
		return 0
	}
	alg, _ := m.attr(em, "", "Algorithm")
	return crypto.KeySize(alg)
}

func (m *message) decryptAll(uris []string, key []byte, kt string) error {
	if len(uris) == 0 && key != nil {
		return nil
	}
	if len(uris) == 0 {
		return wss.Failf(wss.ReasonStructure, "empty ReferenceList")
	}
	for _, uri := range uris {
		// Each decryption reloads the message: resolve afresh every time.
		ed, err := m.resolve(uri)
		if err != nil {
			return err
		}
		if !m.is(ed, nsXEnc, "EncryptedData") {
			return wss.Failf(wss.ReasonReference, "DataReference to %s", m.name(ed))
		}
		if err := m.decryptData(ed, key, kt); err != nil {
			return err
		}
	}
	return nil
}

// decryptData decrypts one EncryptedData and splices the plaintext in its
// place (seed 002: no DOM re-parse, and only the plaintext passes the
// gate, in the context of the rest of the message).
func (m *message) decryptData(ed int, key []byte, kt string) error {
	typ, _ := m.attr(ed, "", "Type")
	swa := typ == typeSwAContent || typ == typeSwAComplete
	if typ != typeElement && typ != typeContent && !swa {
		return wss.Failf(wss.ReasonStructure, "EncryptedData Type must be Element or Content")
	}
	if swa && !m.inSecurity(ed) {
		// SwA §5.5.2: the EncryptedData of an attachment is in the
		// Security header, where WSS4J writes it.
		return wss.Failf(wss.ReasonStructure, "attachment EncryptedData outside the Security header")
	}
	for a := m.doc.Elements[ed].Parent; a >= 0; a = m.doc.Elements[a].Parent {
		if m.is(a, nsDS, "Signature") || m.is(a, nsXEnc, "EncryptedData") || m.is(a, nsXEnc, "EncryptedKey") {
			// BSP R5440 and nested encryption: ciphertext lives in the
			// Body, header blocks or the Security header only.
			return wss.Failf(wss.ReasonStructure, "EncryptedData inside %s", m.name(a))
		}
	}
	var method, ki, cd = -1, -1, -1
	for _, c := range m.children(ed) {
		switch {
		case m.is(c, nsXEnc, "EncryptionMethod") && method < 0:
			method = c
		case m.is(c, nsDS, "KeyInfo") && ki < 0 && cd < 0:
			ki = c
		case m.is(c, nsXEnc, "CipherData") && cd < 0:
			cd = c
		default:
			return wss.Failf(wss.ReasonStructure, "unexpected %s in EncryptedData", m.name(c))
		}
	}
	if method < 0 || cd < 0 {
		return wss.Failf(wss.ReasonStructure, "EncryptedData without EncryptionMethod or CipherData")
	}
	alg, _ := m.attr(method, "", "Algorithm")
	if err := m.allow(wss.UseData, alg); err != nil {
		return err
	}
	if len(m.children(method)) > 0 {
		return wss.Failf(wss.ReasonStructure, "unexpected content in EncryptionMethod")
	}
	if key == nil {
		if ki < 0 {
			return wss.Failf(wss.ReasonToken, "EncryptedData names no key")
		}
		ref, err := m.keyInfo(ki)
		if err != nil {
			return err
		}
		if ref.key == nil {
			return wss.Failf(wss.ReasonToken, "EncryptedData key is not an EncryptedKey")
		}
		key = ref.key
	} else if ki >= 0 {
		if err := m.sameKey(ki, key); err != nil {
			return err
		}
	}
	if swa {
		return m.decryptAttachment(ed, cd, alg, key, typ == typeSwAComplete)
	}
	cv, err := m.cipherValue(cd)
	if err != nil {
		return err
	}
	pt, err := m.decryptCipher(alg, key, cv, "EncryptedData")
	if err != nil {
		return err
	}
	return m.splicePlaintext(ed, typ == typeContent, pt, wss.Decryption{Algorithm: alg, KeyTransport: kt})
}

// sameKey checks the KeyInfo of an EncryptedData decrypted with key, the
// key of the EncryptedKey whose ReferenceList listed it: if the KeyInfo
// names an EncryptedKey too (dataKeyName), it must name one that was
// unwrapped to this very key. Two statements of which key decrypts the
// data must agree; a processor that follows the KeyInfo would otherwise
// decrypt with another key than wssgw did, or fail.
func (m *message) sameKey(ki int, key []byte) error {
	n, err := m.dataKeyName(ki)
	if err != nil || !n.named {
		return err
	}
	lookup := n.uri
	if n.sha1 != nil {
		lookup = "sha1:" + string(n.sha1)
	}
	if k, ok := m.keys[lookup]; !ok || subtle.ConstantTimeCompare(k, key) != 1 {
		return wss.Failf(wss.ReasonToken, "EncryptedData names another EncryptedKey than the one that lists it")
	}
	return nil
}

// splicePlaintext puts pt in place of EncryptedData ed (or of the
// wsse11:EncryptedHeader around it) and gates the plaintext in place.
func (m *message) splicePlaintext(ed int, content bool, pt []byte, d wss.Decryption) error {
	region, parent := ed, m.doc.Elements[ed].Parent
	if parent >= 0 && m.is(parent, nsWSSE11, "EncryptedHeader") {
		if content {
			return wss.Failf(wss.ReasonStructure, "EncryptedHeader with Content encryption")
		}
		region, parent = parent, m.doc.Elements[parent].Parent
	}
	if content && (parent < 0 || parent == m.header || parent == m.secIdx) {
		// parent < 0: the EncryptedData is the document element of a
		// plain document (DecryptDocument) and has no content to replace.
		return wss.Failf(wss.ReasonStructure, "Content encryption of a header or of no element")
	}
	d.Header = parent >= 0 && parent == m.header
	d.Content = content
	a := m.doc.Elements[region].Start
	if content {
		d.Start = m.start(parent)
	} else {
		d.Start = a
		if len(pt) == 0 || pt[0] != '<' {
			return wss.Failf(wss.ReasonDecrypt, "Element plaintext is not an element")
		}
	}
	if err := m.splice(region, pt); err != nil {
		return err
	}
	if err := m.checkPlaintext(a, a+len(pt), content); err != nil {
		return err
	}
	m.res.Decrypted = append(m.res.Decrypted, d)
	return nil
}

// splice replaces element region (an EncryptedData or EncryptedHeader)
// with pt, moves every recorded offset with it and gates the result. Only
// pt is scanned, in the state the gate is in where it goes
// (xmlscan.ScanReplace): the gate's verdict and Document are those of a
// scan of the whole new message, without the second pass over it that
// re-parsing decrypted content costs (seed 002).
func (m *message) splice(region int, pt []byte) error {
	a, b := m.doc.Elements[region].Start, m.doc.Elements[region].End
	delta := len(pt) - (b - a)
	move := func(x *int) {
		switch {
		case *x >= b:
			*x += delta
		case *x > a:
			*x = a
		}
	}
	r := m.res
	if r.Timestamp != nil {
		move(&r.Timestamp.Start)
	}
	if r.Username != nil {
		move(&r.Username.Start)
	}
	if r.Token >= 0 {
		move(&r.Token)
	}
	for i := range r.Signatures {
		for j := range r.Signatures[i].Covered {
			move(&r.Signatures[i].Covered[j])
		}
	}
	for i := range r.Decrypted {
		move(&r.Decrypted[i].Start)
	}
	m.reloads++
	if m.engine.wholeRescan {
		data := make([]byte, 0, len(m.data)-(b-a)+len(pt))
		data = append(append(append(data, m.data[:a]...), pt...), m.data[b:]...)
		return m.load(data)
	}
	return m.reload(region, pt)
}

// checkPlaintext rejects decrypted content that would smuggle structure
// past the checks already done: a Security header, a Signature, a SOAP
// Envelope, Header or Body, or more ciphertext (security.md A11). Element
// plaintext must be exactly one element.
func (m *message) checkPlaintext(a, b int, content bool) error {
	top := 0
	for i := range m.doc.Elements {
		e := &m.doc.Elements[i]
		if e.Start < a || e.Start >= b {
			continue
		}
		switch {
		case e.Space == nsWSSE && e.Local == "Security",
			e.Space == nsDS && e.Local == "Signature",
			e.Space == soap.NS11 || e.Space == soap.NS12,
			e.Space == nsXEnc, e.Space == nsWSSE11 && e.Local == "EncryptedHeader":
			return wss.Failf(wss.ReasonStructure, "decrypted content holds %s", m.name(i))
		}
		if e.Parent < 0 || m.doc.Elements[e.Parent].Start < a {
			top++
			if !content && (e.Start != a || e.End != b) {
				return wss.Failf(wss.ReasonDecrypt, "Element plaintext is not exactly one element")
			}
		}
	}
	if !content && top != 1 {
		return wss.Failf(wss.ReasonDecrypt, "Element plaintext is not exactly one element")
	}
	if bytes.Contains(m.data[a:b], []byte("<!--")) {
		return wss.Failf(wss.ReasonStructure, "comment in decrypted content")
	}
	return nil
}

// decryptCipher decrypts cv, timing it, for XML content and attachments.
func (m *message) decryptCipher(alg string, key, cv []byte, what string) ([]byte, error) {
	start := time.Now()
	pt, err := crypto.DecryptData(alg, key, cv)
	m.res.DecryptTime += time.Since(start)
	if err != nil {
		return nil, wss.Wrap(wss.ReasonDecrypt, err, "%s", what)
	}
	return pt, nil
}

// setKey records a symmetric key for later references to it.
func (m *message) setKey(ref string, key []byte) {
	if m.keys == nil {
		m.keys = map[string][]byte{}
	}
	m.keys[ref] = key
}
