package attack

import (
	"strings"
)

func (g *gen) reference() {
	m := g.m
	const F = FamilyReference
	bodyRef := m.refTo(m.bodyID)
	if bodyRef < 0 {
		bodyRef = m.refs[0]
	}
	R := m.bytesOf(bodyRef)
	dv := m.digestValueOf(bodyRef)

	// A Reference with a bad digest over an existing element.
	if dv >= 0 {
		e := m.el(dv)
		bad := m.elementWith(bodyRef, edit{e.StartEnd, e.EndStart, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="})
		g.add(F, "ref/extra-bad-digest", m.apply(m.after(m.refs[len(m.refs)-1], bad)))
	}
	// Dangling references.
	dang := m.refWithURI(bodyRef, "#id-does-not-exist")
	g.add(F, "ref/dangling-extra", m.apply(m.after(m.refs[len(m.refs)-1], dang)))
	g.add(F, "ref/dangling-body-uri", m.apply(m.replace(bodyRef, dang)))
	// Required parts no longer referenced.
	if tr := m.refTo(m.tsID); tr >= 0 {
		g.add(F, "ref/timestamp-ref-removed", m.apply(m.remove(tr)))
	}
	g.add(F, "ref/body-ref-removed", m.apply(m.remove(bodyRef)))
	// Non-local and XPointer URIs.
	for _, u := range []struct{ name, uri string }{
		{"xpointer-id", "#xpointer(id('" + m.bodyID + "'))"},
		{"xpointer-root", "#xpointer(/)"},
		{"http", "http://127.0.0.1:9/attack.xml"},
		{"file", "file:///etc/passwd"},
		{"relative", "attack.xml"},
		{"empty", ""},
		{"cid", "cid:attack@wssgw"},
	} {
		g.add(F, "ref/uri-"+u.name, m.apply(m.replace(bodyRef, m.refWithURI(bodyRef, u.uri))))
	}
	// The same element referenced twice.
	g.add(F, "ref/body-referenced-twice", m.apply(m.after(bodyRef, R)))

	// Duplicate ids on other elements (A2), under several attribute names.
	if m.bodyID != "" {
		id := m.bodyID
		dupWsu := `<atk:Dup xmlns:atk="` + NSAttack + `" xmlns:wsu="` + NSWSU + `" wsu:Id="` + id + `">x</atk:Dup>`
		g.add(F, "ref/duplicate-wsu-id-header-block", m.apply(m.appendChild(m.header, dupWsu)))
		g.add(F, "ref/duplicate-wsu-id-in-security", m.apply(m.appendChild(m.security, dupWsu)))
		for _, a := range []struct{ name, attr string }{
			{"id", `Id="` + id + `"`},
			{"ID", `ID="` + id + `"`},
			{"xml-id", `xml:id="` + id + `"`},
			{"other-ns-id", `xmlns:o="urn:attack:other" o:Id="` + id + `"`},
		} {
			blk := `<atk:Dup xmlns:atk="` + NSAttack + `" ` + a.attr + `>x</atk:Dup>`
			g.add(F, "ref/duplicate-"+a.name+"-header-block", m.apply(m.appendChild(m.header, blk)))
		}
		if c := m.doc.FirstChild(m.body); c >= 0 {
			// Deep inside the payload: the Body's first child gets the id.
			g.add(F, "ref/duplicate-wsu-id-in-body-payload", m.apply(m.addAttrs(c, `xmlns:wsu="`+NSWSU+`" wsu:Id="`+id+`"`)))
			// A Reference to a Body child instead of the Body (WSS-448).
			if m.doc.FindAttr(c, NSWSU, "Id") < 0 {
				g.add(F, "ref/body-child-referenced", m.apply(
					m.addAttrs(c, `xmlns:wsu="`+NSWSU+`" wsu:Id="id-child"`),
					m.replace(bodyRef, m.refWithURI(bodyRef, "#id-child"))))
			}
		}
		// The Body also carries a second id-like attribute.
		g.add(F, "ref/body-two-id-attributes", m.apply(m.addAttrs(m.body, `Id="id-attacker"`)))
	}
	if m.tsID != "" && m.bst >= 0 {
		// The BST carries the Timestamp's id.
		if e, ok := m.setAttr(m.bst, NSWSU, "Id", m.tsID); ok {
			g.add(F, "ref/bst-takes-timestamp-id", m.apply(e))
		}
	}
}

// digestValueOf returns the DigestValue child of Reference r, or -1.
func (m *msg) digestValueOf(r int) int {
	for _, dv := range m.digestValues {
		if m.el(dv).Parent == r {
			return dv
		}
	}
	return -1
}

// refWithURI returns Reference r with its URI replaced.
func (m *msg) refWithURI(r int, uri string) string {
	uri = strings.ReplaceAll(uri, `"`, "&quot;")
	if e, ok := m.setAttr(r, "", "URI", uri); ok {
		return m.elementWith(r, e)
	}
	e := m.el(r)
	at := e.Start + 1 + e.QNameLen()
	return m.elementWith(r, edit{at, at, ` URI="` + uri + `"`})
}
