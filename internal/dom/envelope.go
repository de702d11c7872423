package dom

import (
	"encoding/xml"

	"github.com/wssgw/wssgw/internal/soap"
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
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
	m.res.Attributes = m.envelopeAttributes(m.res.Attributes[:0])
	return m.locateSecurity()
}

// envelopeAttributes appends the attributes of the Envelope and the Header
// other than namespace declarations, each with the white space before it:
// content no signature covers, which the policy's unsignedHeaders decides
// on (wss.Policy.unsigned).
func (m *message) envelopeAttributes(out []wss.Attribute) []wss.Attribute {
	for _, el := range []int{0, m.header} {
		if el < 0 {
			continue
		}
		r := m.doc.Elements[el].Attrs
		for j := r.Start; j < r.End; j++ {
			a := &m.doc.Attrs[j]
			start := a.Name.Start
			for start > 0 && xmlscan.AllSpace(m.data[start-1:start]) {
				start--
			}
			// Value is the span between the quotes; the closing quote
			// ends the attribute.
			out = append(out, wss.Attribute{Name: xml.Name{Space: a.Space, Local: a.Local}, Span: [2]int{start, a.Value.End + 1}})
		}
	}
	return out
}

// locateSecurity picks the one Security header for our role (WSS 1.1 §6.1:
// at most one per role; BSP R3206 requires no two without an actor).
func (m *message) locateSecurity() error {
	m.res.Headers = m.res.Headers[:0]
	if m.header < 0 {
		return nil
	}
	for _, h := range m.children(m.header) {
		if !m.is(h, nsWSSE, "Security") || !m.ours(h) {
			// A Security header for another role is a header block
			// like any other for the unsigned-content policy.
			e := &m.doc.Elements[h]
			m.res.Headers = append(m.res.Headers, wss.Part{Name: xml.Name{Space: e.Space, Local: e.Local}, Start: e.Start, End: e.End})
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

// isIDAttr reports whether an attribute counts as an element id: Id or ID
// in any namespace or none (wsu:Id of WSS 1.1 §4; Id and ID of XML
// Signature, XML Encryption and SAML; ids under other namespaces that some
// resolver might honour), and xml:id. Ids are compared by value across all of
// them, so no two resolvers can disagree about which element an id names
// (security.md A2, A3).
// The rule is wss.IsIDAttr, shared with the template automaton.
func isIDAttr(a *xmlscan.Attr) bool { return wss.IsIDAttr(a) }

// maxKeptIDs bounds the id index a pooled scratch keeps between messages.
const maxKeptIDs = 1024

// indexIDs builds the id index over the whole document and rejects any
// duplicate id value, and any element with two id attributes: an id must
// name exactly one element whatever attribute a resolver looks at
// (security.md A2, A3; Santuario secure validation).
func (m *message) indexIDs() error {
	if m.ids == nil || len(m.ids) > maxKeptIDs {
		m.ids = make(map[string]int)
	} else {
		clear(m.ids) // a reload indexes the new Document afresh
	}
	for i := range m.doc.Elements {
		found := false
		r := m.doc.Elements[i].Attrs
		for j := r.Start; j < r.End; j++ {
			if !isIDAttr(&m.doc.Attrs[j]) {
				continue
			}
			if found {
				return wss.Failf(wss.ReasonReference, "%s carries two id attributes", m.name(i))
			}
			found = true
			v := string(m.doc.AttrValue(j, nil))
			if _, dup := m.ids[v]; dup {
				return wss.Failf(wss.ReasonReference, "duplicate id")
			}
			m.ids[v] = i
		}
	}
	return nil
}

// valueElements hold a single security value (base64, a name, a number, a
// time). Their content must be one text run: a child element, comment or
// CDATA section would be skipped by one processor and not by another
// (security.md A9; Duo 2018; xml-crypto CVE-2025-29775), so it is refused
// wherever they occur, also in the Body and in decrypted content.
var valueElements = map[xml.Name]bool{
	{Space: nsDS, Local: "SignatureValue"}: true, {Space: nsDS, Local: "DigestValue"}: true,
	{Space: nsDS, Local: "X509Certificate"}: true, {Space: nsDS, Local: "X509SKI"}: true,
	{Space: nsDS, Local: "X509IssuerName"}: true, {Space: nsDS, Local: "X509SerialNumber"}: true,
	{Space: nsDS, Local: "HMACOutputLength"}: true, {Space: nsXEnc, Local: "CipherValue"}: true,
	{Space: nsWSSE, Local: "BinarySecurityToken"}: true, {Space: nsWSSE, Local: "KeyIdentifier"}: true,
	{Space: nsWSSE, Local: "Username"}: true, {Space: nsWSSE, Local: "Password"}: true,
	{Space: nsWSSE, Local: "Nonce"}: true, {Space: nsWSU, Local: "Created"}: true,
	{Space: nsWSU, Local: "Expires"}: true,
}

// valueSpace returns whether any element of namespace space is one of
// valueElements: the map is consulted only for those, not once per element
// of the Body (issue 14: a fresh shape's whole message is walked).
func valueSpace(space string) bool {
	switch space {
	case nsDS, nsXEnc, nsWSSE, nsWSU:
		return true
	}
	return false
}

// checkValues enforces valueElements over the whole document.
func (m *message) checkValues() error {
	for i := range m.doc.Elements {
		e := &m.doc.Elements[i]
		if !valueSpace(e.Space) || !valueElements[xml.Name{Space: e.Space, Local: e.Local}] {
			continue
		}
		if e.Flags&(xmlscan.FlagComment|xmlscan.FlagCDATA) != 0 || (i+1 < e.Next && !m.xopValue(i)) {
			return wss.Failf(wss.ReasonMalformed, "%s must hold text only", m.name(i))
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

// xopValue reports whether value element i is a base64Binary WS-Security
// value whose one child is an xop:Include, in a package with attachments:
// WSS4J (storeBytesInAttachment, CXF's default with MTOM on) moves the
// octets of an xenc:CipherValue and of a wsse:BinarySecurityToken into a
// MIME part, and its receiver expands an xop:Include in exactly these two
// (BinarySecurityTokenProcessor, EncryptedKeyProcessor, EncryptionUtils:
// WSSecurityUtil.getBytesFromAttachment); no other value element takes
// one (issue 15). That the xop:Include is its only content is checked by
// indexXOP.
func (m *message) xopValue(i int) bool {
	return m.att != nil && (m.is(i, nsXEnc, "CipherValue") || m.is(i, nsWSSE, "BinarySecurityToken")) &&
		m.doc.Elements[i].Next == i+2 && m.is(i+1, nsXOP, "Include")
}
