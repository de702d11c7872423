package dom

import "github.com/wssgw/wssgw/internal/wss"

// Security header values held in MIME parts (issue 15). With MTOM on, CXF
// sets WSS4J's storeBytesInAttachment: the octets of a BinarySecurityToken
// and of every xenc:CipherValue go into a part, and the element keeps an
// xop:Include (xopValue). CipherValue parts are read by xopCipherValue;
// this file reads token parts and decides which header parts the backend
// gets.

// bstOctets returns the octets of BinarySecurityToken t: its base64 text,
// or, when it holds an xop:Include (WSS4J storeBytesInAttachment), the
// content of the part it names. The part is header data: consumed, never
// forwarded to the backend (tokenParts marks it, whether or not a
// reference used the token).
func (m *message) bstOctets(t int) ([]byte, error) {
	if !m.xopValue(t) {
		return b64(m.text(t))
	}
	cid := m.att.xop[t+1]
	a, ok := m.att.atts.Attachment(cid)
	if !ok {
		return nil, wss.Failf(wss.ReasonReference, "reference to an unknown attachment")
	}
	if a.Size() > wss.MaxTokenPart {
		return nil, wss.Failf(wss.ReasonToken, "BinarySecurityToken part of %d bytes exceeds %d", a.Size(), wss.MaxTokenPart)
	}
	return m.readBounded(a)
}

// tokenParts marks as consumed every part an xop:Include of a
// BinarySecurityToken of our Security header names: like a CipherValue
// part it is a value of the header, which the backend does not get with
// the header removed (with keepSecurityHeader, keptParts forwards it).
func (m *message) tokenParts() {
	for inc, cid := range m.att.xop {
		if t := m.doc.Elements[inc].Parent; t >= 0 && m.is(t, nsWSSE, "BinarySecurityToken") && m.inSecurity(t) {
			m.res.Attachments[m.att.fact[cid]].Consumed = true
		}
	}
}

// keptParts are the parts an xop:Include of our Security header names when
// the policy forwards that header (keepSecurityHeader): the header the
// backend gets still names them (a BinarySecurityToken's certificate, an
// EncryptedKey's CipherValue), and a package whose xop:Include names no
// part is not XOP (XOP 1.0 §3), so they go on. They stay consumed for the
// policy: header values, which no signature needs to cover.
func (m *message) keptParts() map[string]bool {
	if !m.p.Config.KeepSecurityHeader || m.secIdx < 0 {
		return nil
	}
	kept := map[string]bool{}
	for inc, cid := range m.att.xop {
		for a := m.doc.Elements[inc].Parent; a >= 0; a = m.doc.Elements[a].Parent {
			if a == m.secIdx {
				kept[cid] = true
				break
			}
		}
	}
	return kept
}
