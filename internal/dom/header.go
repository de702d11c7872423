package dom

import (
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// process walks our Security header in document order, as WSS 1.1 §5
// requires of a receiver: each child is processed with what precedes it, so
// sign-then-encrypt and encrypt-then-sign both come out right.
func (m *message) process() error {
	if m.secIdx >= 0 {
		for k, c := 0, m.doc.FirstChild(m.secIdx); c >= 0; {
			reloads := m.reloads
			encrypted := m.is(c, nsXEnc, "EncryptedData")
			if err := m.headerChild(c); err != nil {
				return err
			}
			switch {
			case encrypted:
				// The plaintext element now at position k is processed
				// next (it cannot be ciphertext again: checkPlaintext).
				c = m.nthChild(m.secIdx, k)
			case m.reloads != reloads:
				// Decryption reloads the message, so the next child is
				// found afresh; it never changes how many precede
				// position k.
				k++
				c = m.nthChild(m.secIdx, k)
			default:
				k++
				c = m.doc.NextSibling(c)
			}
		}
	}
	return m.finish()
}

func (m *message) headerChild(c int) error {
	e := &m.doc.Elements[c]
	switch {
	case e.Space == nsWSU && e.Local == "Timestamp":
		return m.timestamp(c)
	case e.Space == nsWSSE && e.Local == "BinarySecurityToken":
		// Parsed when a reference uses it: zeep puts the token after the
		// Signature that refers to it.
		return nil
	case e.Space == nsWSSE && e.Local == "UsernameToken":
		return m.usernameToken(c)
	case e.Space == nsXEnc && e.Local == "EncryptedKey":
		return m.encryptedKey(c)
	case e.Space == nsXEnc && e.Local == "ReferenceList":
		// A standalone ReferenceList: each EncryptedData's KeyInfo names
		// its key.
		return m.decryptAll(m.dataReferences(c), nil, "")
	case e.Space == nsXEnc && e.Local == "EncryptedData":
		// Not named by an earlier ReferenceList: its KeyInfo names its key.
		return m.decryptData(c, nil, "")
	case e.Space == nsDS && e.Local == "Signature":
		return m.signature(c)
	case e.Space == nsWSSE11 && e.Local == "SignatureConfirmation":
		// Checked here, in header order; recorded by finish, after every
		// decryption moved the offsets (confirm.go).
		_, err := m.confirmation(c)
		return err
	}
	return wss.Failf(wss.ReasonStructure, "unsupported %s in the Security header", m.name(c))
}

// finish accounts for every signature and encrypted element of the message
// (a signature wssgw did not verify, or ciphertext it did not decrypt, must
// not travel on as if it had been checked: security.md A5, A11) and fills
// in the structural facts.
func (m *message) finish() error {
	if m.doc.Signatures != m.signatures {
		return wss.Failf(wss.ReasonStructure, "a ds:Signature outside the Security header")
	}
	for i := range m.doc.Elements {
		e := &m.doc.Elements[i]
		switch {
		case e.Space == nsXEnc && e.Local == "EncryptedData":
			return wss.Failf(wss.ReasonDecrypt, "EncryptedData that no EncryptedKey or ReferenceList named")
		case e.Space == nsXEnc && e.Local == "EncryptedKey" && !m.inSecurity(i):
			return wss.Failf(wss.ReasonStructure, "EncryptedKey outside the Security header")
		case e.Space == nsWSSE11 && e.Local == "EncryptedHeader":
			return wss.Failf(wss.ReasonDecrypt, "EncryptedHeader not decrypted")
		}
	}
	if err := m.confirmations(); err != nil {
		return err
	}
	m.res.Version = m.version
	m.res.Body = m.start(m.body)
	if m.secIdx >= 0 {
		s := &m.doc.Elements[m.secIdx]
		m.res.Security = [2]int{s.Start, s.End}
	}
	m.res.Comments = m.res.Comments[:0]
	for _, n := range m.doc.Misc {
		if n.Kind == xmlscan.NodeComment {
			m.res.Comments = append(m.res.Comments, [2]int{n.Span.Start, n.Span.End})
		}
	}
	return nil
}

// use records an algorithm (or key reference kind) for the usage counters.
func (m *message) use(kind, value string) {
	m.res.Algorithms = append(m.res.Algorithms, wss.AlgorithmUse{Kind: kind, Value: value})
}

// allow checks an algorithm URI against the policy before any key is used
// (DESIGN.md §5.2) and records its use.
func (m *message) allow(kind, uri string) error {
	m.use(kind, uri)
	return m.allowed(kind, uri)
}

// allowed is allow without recording the use (precheck: the use is
// recorded when the element is processed).
func (m *message) allowed(kind, uri string) error {
	if !m.p.Allows(kind, uri) {
		return wss.Failf(wss.ReasonAlgorithm, "%s algorithm %q not allowed", kind, uri)
	}
	return nil
}
