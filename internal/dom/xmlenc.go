package dom

import (
	"time"

	"github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/wss"
)

// DecryptDocument gates a plain XML document (no SOAP envelope) and decrypts
// every xenc:EncryptedData in it under policy p, in document order, with the
// rules of the WS-Security path (message.decryptData): Type Element or
// Content only, the data and key transport algorithms on the allow-list, the
// key from an xenc:EncryptedKey unwrapped with one of the policy's decryption
// keys (named by X509Data or a SecurityTokenReference, or the only key), no
// CipherReference, and every plaintext gated in place as part of the whole
// document (xmlscan.ScanReplace).
// The EncryptedKey is either inside the EncryptedData's ds:KeyInfo or a
// ds:KeyInfo/wsse:SecurityTokenReference names one processed before; a
// ds:KeyName, RetrievalMethod or AgreementMethod is refused: keys come only
// from the configuration. It returns the plaintext document. It exists for
// conformance runs over XML Encryption test vectors; the gateway only ever
// calls Process. now is kept for symmetry with VerifyDocument (decryption
// checks no validity period). Every failure is a *wss.Error.
func (e *Engine) DecryptDocument(data []byte, p *wss.Policy, now time.Time) ([]byte, error) {
	m := e.plainMessage(p, now)
	if err := m.load(data); err != nil {
		return nil, err
	}
	n := 0
	for {
		ed := m.firstEncryptedData()
		if ed < 0 {
			break
		}
		// Each decryption removes one EncryptedData (its plaintext may not
		// hold another: checkPlaintext), so the loop ends.
		if err := m.decryptDocumentData(ed); err != nil {
			return nil, err
		}
		n++
	}
	if n == 0 {
		return nil, wss.Failf(wss.ReasonMissing, "no xenc:EncryptedData in the document")
	}
	for i := range m.doc.Elements {
		if m.is(i, nsXEnc, "EncryptedKey") {
			// An EncryptedKey outside every EncryptedData was never used.
			return nil, wss.Failf(wss.ReasonStructure, "EncryptedKey that no EncryptedData used")
		}
	}
	return m.data, nil
}

// firstEncryptedData returns the gate index of the first xenc:EncryptedData
// in document order, or -1.
func (m *message) firstEncryptedData() int {
	for i := range m.doc.Elements {
		if m.is(i, nsXEnc, "EncryptedData") {
			return i
		}
	}
	return -1
}

// decryptDocumentData decrypts EncryptedData ed of a plain document. A key
// carried in its KeyInfo as an EncryptedKey is unwrapped first; any other
// KeyInfo is read by decryptData with the rules of the WS-Security path.
func (m *message) decryptDocumentData(ed int) error {
	var key []byte
	var kt string
	if ki := m.child(ed, nsDS, "KeyInfo"); ki >= 0 {
		if kids := m.children(ki); len(kids) == 1 && m.is(kids[0], nsXEnc, "EncryptedKey") {
			size := 0
			if em := m.child(ed, nsXEnc, "EncryptionMethod"); em >= 0 {
				alg, _ := m.attr(em, "", "Algorithm")
				size = crypto.KeySize(alg)
			}
			k, alg, uris, err := m.unwrapKey(kids[0], size)
			if err != nil {
				return err
			}
			if len(uris) > 0 {
				return wss.Failf(wss.ReasonStructure, "EncryptedKey inside an EncryptedData with a ReferenceList")
			}
			key, kt = k, alg
		}
	}
	return m.decryptData(ed, key, kt)
}
