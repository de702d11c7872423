package dom

import (
	"bytes"

	"github.com/wssgw/wssgw/internal/wss"
)

// confirmation checks one wsse11:SignatureConfirmation (WSS 1.1 §8.5) and
// returns its Value as sent, "" when it has none (the request it answers
// carried no signature). The schema makes it an empty element with an
// optional wsu:Id, an optional unqualified Value of type base64Binary and
// attributes of other namespaces only; anything else is refused, so that
// no two readers can disagree about which value it confirms (a second,
// wsse11-qualified Value, say, or a value hidden in content).
func (m *message) confirmation(c int) (string, error) {
	e := &m.doc.Elements[c]
	if c+1 < e.Next || len(bytes.TrimSpace(m.doc.Data[e.StartEnd:e.EndStart])) > 0 {
		return "", wss.Failf(wss.ReasonStructure, "SignatureConfirmation must be empty")
	}
	value := ""
	for j := e.Attrs.Start; j < e.Attrs.End; j++ {
		a := &m.doc.Attrs[j]
		switch {
		case a.Space == "" && a.Local == "Value":
			value = string(m.doc.AttrValue(j, nil))
		case a.Space == nsWSU && a.Local == "Id":
		case a.Space == "" || a.Space == nsWSSE11:
			// anyAttribute is ##other: neither unqualified nor wsse11.
			return "", wss.Failf(wss.ReasonStructure, "attribute %s on SignatureConfirmation", a.Local)
		}
	}
	// An empty Value reads like an absent one, "no signature": it cannot
	// match the SignatureValue of a signed request, so a requester that
	// compares still fails as §8.5 wants. Any other must be base64Binary.
	if value != "" {
		if _, err := b64(value); err != nil {
			return "", wss.Wrap(wss.ReasonMalformed, err, "SignatureConfirmation Value")
		}
	}
	return value, nil
}

// confirmations records every SignatureConfirmation of our Security header
// in the result. It runs from finish, once decryption can no longer move
// their offsets.
func (m *message) confirmations() error {
	if m.secIdx < 0 {
		return nil
	}
	for _, c := range m.children(m.secIdx) {
		if !m.is(c, nsWSSE11, "SignatureConfirmation") {
			continue
		}
		v, err := m.confirmation(c)
		if err != nil {
			return err
		}
		m.res.Confirmations = append(m.res.Confirmations, v)
		m.res.ConfirmationStarts = append(m.res.ConfirmationStarts, m.start(c))
	}
	return nil
}
