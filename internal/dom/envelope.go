package dom

import (
	"encoding/xml"

	"github.com/wssgw/wssgw/internal/soap"
	"github.com/wssgw/wssgw/internal/wss"
)

// locate finds the Envelope, Header, Body and our Security header, and
// enforces the SOAP structure: Envelope holds an optional Header and then
// exactly one Body, and nothing else (SOAP 1.2 Part 1 §5; SOAP 1.1 allows
// trailing elements after the Body, which no stack sends and a wrapping
// attack would use, security.md A1).
func (m *message) locate() error {
	m.env, m.header, m.body, m.secIdx = 0, -1, -1, -1
	root := &m.doc.Elements[0]
	switch {
	case root.Local == "Envelope" && root.Space == soap.NS11:
		m.version = soap.V11
	case root.Local == "Envelope" && root.Space == soap.NS12:
		m.version = soap.V12
	default:
		return wss.Failf(wss.ReasonStructure, "root is not a SOAP Envelope")
	}
	ns := root.Space
	for k, c := range m.children(0) {
		switch {
		case k == 0 && m.is(c, ns, "Header"):
			m.header = c
		case m.body < 0 && m.is(c, ns, "Body"):
			m.body = c
		default:
			return wss.Failf(wss.ReasonStructure, "unexpected %s in Envelope", m.name(c))
		}
	}
	if m.body < 0 {
		return wss.Failf(wss.ReasonStructure, "no Body")
	}
	return m.locateSecurity()
}

// locateSecurity picks the one Security header for our role (WSS 1.1 §6.1:
// at most one per role; BSP R3206 requires no two without an actor).
func (m *message) locateSecurity() error {
	m.res.Headers = m.res.Headers[:0]
	if m.header < 0 {
		return nil
	}
	for _, h := range m.children(m.header) {
		if !m.is(h, nsWSSE, "Security") {
			e := &m.doc.Elements[h]
			m.res.Headers = append(m.res.Headers, wss.Part{Name: xml.Name{Space: e.Space, Local: e.Local}, Start: e.Start})
			continue
		}
		if !m.ours(h) {
			continue
		}
		if m.secIdx >= 0 {
			return wss.Failf(wss.ReasonStructure, "two Security headers for this role")
		}
		m.secIdx = h
	}
	return nil
}

// ours reports whether Security header h is addressed to wssgw's role.
func (m *message) ours(h int) bool {
	var role string
	var ok bool
	if m.version == soap.V12 {
		role, ok = m.attr(h, soap.NS12, "role")
		if role == roleUltimate {
			role = ""
		}
	} else {
		role, ok = m.attr(h, soap.NS11, "actor")
	}
	if !ok {
		role = ""
	}
	return role == m.p.Config.Role
}

// idAttrs are the attributes honoured as element ids: wsu:Id (WSS 1.1
// §4), Id and ID (XML Signature, XML Encryption, SAML) and xml:id. Ids are
// resolved by namespace, never by prefix (security.md A3).
var idAttrs = []xml.Name{{Space: nsWSU, Local: "Id"}, {Local: "Id"}, {Local: "ID"}, {Space: nsXML, Local: "id"}}

// indexIDs builds the id index over the whole document and rejects any
// duplicate id value, and any element with two id attributes: an id must
// name exactly one element whatever attribute a resolver looks at
// (security.md A2, A3; Santuario secure validation).
func (m *message) indexIDs() error {
	m.ids = make(map[string]int)
	for i := range m.doc.Elements {
		found := false
		for _, n := range idAttrs {
			v, ok := m.attr(i, n.Space, n.Local)
			if !ok {
				continue
			}
			if found {
				return wss.Failf(wss.ReasonReference, "%s carries two id attributes", m.name(i))
			}
			found = true
			if _, dup := m.ids[v]; dup {
				return wss.Failf(wss.ReasonReference, "duplicate id")
			}
			m.ids[v] = i
		}
	}
	return nil
}

// resolve returns the element a same-document reference "#id" names. Only
// bare-name references are allowed: no xpointer, no external URI, no
// empty URI (DESIGN.md §5.8; security.md A7).
func (m *message) resolve(uri string) (int, error) {
	if len(uri) < 2 || uri[0] != '#' {
		return -1, wss.Failf(wss.ReasonReference, "reference URI is not #id")
	}
	i, ok := m.ids[uri[1:]]
	if !ok {
		return -1, wss.Failf(wss.ReasonReference, "reference to an unknown id")
	}
	return i, nil
}

// start returns the byte offset of element i.
func (m *message) start(i int) int { return m.doc.Elements[i].Start }

// inSecurity reports whether element i is a direct child of our Security
// header.
func (m *message) inSecurity(i int) bool {
	return m.secIdx >= 0 && m.doc.Elements[i].Parent == m.secIdx
}
