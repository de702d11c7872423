package attack

import "github.com/wssgw/wssgw/internal/xmlscan"

// rebind returns an edit binding prefix to uri on element i: the value of
// i's own declaration if it has one, else a new declaration.
func (m *msg) rebind(i int, prefix, uri string) edit {
	if e, ok := m.nsDecl(i, prefix); ok {
		e.s = uri
		return e
	}
	if prefix == "" {
		return m.addAttrs(i, `xmlns="`+uri+`"`)
	}
	return m.addAttrs(i, `xmlns:`+prefix+`="`+uri+`"`)
}

func (g *gen) namespace() {
	m := g.m
	const F = FamilyNamespace
	// Undeclared prefixes.
	g.add(F, "ns/undeclared-prefix-attribute", m.apply(m.addAttrs(m.body, `undeclared:attack="1"`)))
	g.add(F, "ns/undeclared-prefix-header-block", m.apply(m.appendChild(m.header, `<undeclared:Block>x</undeclared:Block>`)))
	g.add(F, "ns/undeclared-prefix-in-security", m.apply(m.appendChild(m.security, `<undeclared:Token/>`)))
	// The id attribute's prefix rebound to another URI: the id is no longer
	// a wsu:Id.
	for _, x := range []struct {
		name string
		el   int
	}{{"body", m.body}, {"timestamp", m.timestamp}} {
		if x.el < 0 {
			continue
		}
		j := m.doc.FindAttr(x.el, NSWSU, "Id")
		if j < 0 || m.doc.Attrs[j].Prefix == "" {
			continue
		}
		g.add(F, "ns/wsu-rebound-on-"+x.name, m.apply(m.rebind(x.el, m.doc.Attrs[j].Prefix, "urn:attack:wsu")))
		g.add(F, "ns/wsu-rebound-to-wsse11-on-"+x.name, m.apply(m.rebind(x.el, m.doc.Attrs[j].Prefix, NSWSSE11)))
	}
	// Reserved prefixes and namespaces.
	g.add(F, "ns/xml-prefix-rebound", m.apply(m.addAttrs(m.body, `xmlns:xml="urn:attack"`)))
	g.add(F, "ns/xmlns-prefix-declared", m.apply(m.addAttrs(m.body, `xmlns:xmlns="urn:attack"`)))
	g.add(F, "ns/xml-namespace-other-prefix", m.apply(m.addAttrs(m.body, `xmlns:x="`+xmlscan.NamespaceXML+`"`)))
	g.add(F, "ns/xmlns-namespace-declared", m.apply(m.addAttrs(m.body, `xmlns:x="`+xmlscan.NamespaceXMLNS+`"`)))
	g.add(F, "ns/prefix-undeclared-empty", m.apply(m.addAttrs(m.body, `xmlns:atk=""`)))
	g.add(F, "ns/xmlns-element-prefix", m.apply(m.appendChild(m.header, `<xmlns:x>y</xmlns:x>`)))
	// Names that are not QNames.
	g.add(F, "ns/colon-attribute-name", m.apply(m.addAttrs(m.body, `:attack="1"`)))
	g.add(F, "ns/empty-prefix-declaration", m.apply(m.addAttrs(m.body, `xmlns:="urn:attack"`)))
	g.add(F, "ns/multi-colon-element", m.apply(m.appendChild(m.header, `<a:b:c xmlns:a="urn:attack"/>`)))
	g.add(F, "ns/empty-local-name", m.apply(m.appendChild(m.header, `<atk: xmlns:atk="urn:attack"/>`)))
	// The Body not in the SOAP namespace any more.
	b := m.el(m.body)
	q := b.Start + 1
	g.add(F, "ns/default-namespace-body", m.apply(
		edit{q, q + b.QNameLen(), `Body xmlns="urn:attack"`},
		edit{b.EndStart, b.End, "</Body>"}))
	if p := m.el(m.body).Prefix; p != "" {
		g.add(F, "ns/soap-prefix-rebound-on-body", m.apply(m.rebind(m.body, p, "urn:attack:soap")))
	} else {
		g.add(F, "ns/soap-default-rebound-on-body", m.apply(m.rebind(m.body, "", "urn:attack:soap")))
	}
	// The Security header, the Signature and the Timestamp in another
	// namespace.
	g.add(F, "ns/security-wsse11-namespace", m.apply(m.rebind(m.security, m.el(m.security).Prefix, NSWSSE11)))
	g.add(F, "ns/security-other-namespace", m.apply(m.rebind(m.security, m.el(m.security).Prefix, "urn:attack:wsse")))
	g.add(F, "ns/signature-dsig11-namespace", m.apply(m.rebind(m.signature, m.el(m.signature).Prefix, xmlscan.NamespaceDSig11)))
	if m.timestamp >= 0 {
		g.add(F, "ns/timestamp-other-namespace", m.apply(m.rebind(m.timestamp, m.el(m.timestamp).Prefix, "urn:attack:wsu")))
	}
	// The other SOAP version.
	other := NSSOAP12
	if m.soap12 {
		other = NSSOAP11
	}
	g.add(F, "ns/soap-version-swapped", m.apply(m.rebind(0, m.el(0).Prefix, other)))
	// The Security header's prefix bound to another URI on the Header, when
	// Security inherits its binding (a harmless override otherwise).
	if _, own := m.nsDecl(m.security, m.el(m.security).Prefix); !own {
		g.add(F, "ns/security-prefix-injected-on-header", m.apply(m.rebind(m.header, m.el(m.security).Prefix, "urn:attack:wsse")))
	}
}
