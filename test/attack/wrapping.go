package attack

import (
	"strings"
)

// detached returns the bytes of element i with the namespace declarations
// it inherits from its ancestors added to its start tag, so that it can be
// moved anywhere and keep its meaning. Exclusive c14n renders only visibly
// used namespaces, so the added declarations do not change its digest.
func (m *msg) detached(i int, edits ...edit) string {
	e := m.el(i)
	seen := map[string]bool{}
	for _, n := range m.doc.NSDeclsOf(i) {
		seen[n.Prefix] = true
	}
	var decls strings.Builder
	for a := e.Parent; a >= 0; a = m.el(a).Parent {
		for _, n := range m.doc.NSDeclsOf(a) {
			if seen[n.Prefix] {
				continue
			}
			seen[n.Prefix] = true
			if n.Prefix == "" {
				if n.URI == "" {
					continue
				}
				decls.WriteString(` xmlns="` + n.URI + `"`)
			} else {
				decls.WriteString(` xmlns:` + n.Prefix + `="` + n.URI + `"`)
			}
		}
	}
	at := e.Start + 1 + e.QNameLen()
	return m.elementWith(i, append(edits, edit{at, at, decls.String()})...)
}

// idVariant edits the start tag of an attacker copy of element i, which
// carries wsu:Id="id" in the original.
type idVariant struct {
	name  string
	edits func(m *msg, i int) []edit
}

func idVariants(m *msg, i int) []idVariant {
	if m.attr(i, NSWSU, "Id") == "" {
		return []idVariant{{"atk-same", func(*msg, int) []edit { return nil }}}
	}
	return []idVariant{
		{"atk-no-id", func(m *msg, i int) []edit {
			_, e, _ := m.attrSpan(i, NSWSU, "Id")
			return []edit{e}
		}},
		{"atk-same-id", func(*msg, int) []edit { return nil }},
		{"atk-changed-id", func(m *msg, i int) []edit {
			e, _ := m.setAttr(i, NSWSU, "Id", "id-attacker")
			return []edit{e}
		}},
		{"atk-unqualified-id", func(m *msg, i int) []edit {
			a, e, _ := m.attrSpan(i, NSWSU, "Id")
			e.s = ` Id="` + string(m.doc.Raw(a.Value)) + `"`
			return []edit{e}
		}},
	}
}

// attackerBody returns an attacker Body: the original start tag edited by
// v, with the attacker's payload (plus extra, placed first).
func (m *msg) attackerBody(v idVariant, extra string) string {
	return m.startTagWith(m.body, v.edits(m, m.body)...) + extra + attackerPayload + m.endTag(m.body)
}

func (g *gen) wrapping() {
	m := g.m
	const F = FamilyWrapping
	B := m.detached(m.body)

	// The signed Body moved, an attacker Body in its place.
	for _, v := range idVariants(m, m.body) {
		atk := m.attackerBody(v, "")
		g.add(F, "wrap/body-in-header-wrapper/"+v.name, m.apply(m.appendChild(m.header, wrapper(B)), m.replace(m.body, atk)))
		g.add(F, "wrap/body-as-header-block/"+v.name, m.apply(m.appendChild(m.header, B), m.replace(m.body, atk)))
		g.add(F, "wrap/body-in-security-wrapper/"+v.name, m.apply(m.appendChild(m.security, wrapper(B)), m.replace(m.body, atk)))
		g.add(F, "wrap/body-in-security/"+v.name, m.apply(m.appendChild(m.security, B), m.replace(m.body, atk)))
		g.add(F, "wrap/body-in-attacker-body-wrapper/"+v.name, m.apply(m.replace(m.body, m.attackerBody(v, wrapper(B)))))
		g.add(F, "wrap/body-after-attacker-body-wrapper/"+v.name, m.apply(m.replace(m.body, atk+wrapper(B))))
		g.add(F, "wrap/second-body-after/"+v.name, m.apply(m.after(m.body, atk)))
		g.add(F, "wrap/second-body-before/"+v.name, m.apply(m.before(m.body, atk)))
	}
	if m.bodyID != "" {
		// The moved copy carries its id as an unqualified Id (WSS4J's
		// fallback attribute); the attacker Body has none.
		a, e, _ := m.attrSpan(m.body, NSWSU, "Id")
		e.s = ` Id="` + string(m.doc.Raw(a.Value)) + `"`
		Bu := m.detached(m.body, e)
		noID := idVariants(m, m.body)[0]
		g.add(F, "wrap/body-in-header-wrapper/copy-unqualified-id/atk-no-id",
			m.apply(m.appendChild(m.header, wrapper(Bu)), m.replace(m.body, m.attackerBody(noID, ""))))
		g.add(F, "wrap/body-in-security-wrapper/copy-unqualified-id/atk-no-id",
			m.apply(m.appendChild(m.security, wrapper(Bu)), m.replace(m.body, m.attackerBody(noID, ""))))
	}
	// The signed Body copied, not moved: the id is duplicated.
	g.add(F, "wrap/body-copied-to-header-wrapper", m.apply(m.appendChild(m.header, wrapper(B))))
	g.add(F, "wrap/body-copied-to-security-wrapper", m.apply(m.appendChild(m.security, wrapper(B))))
	g.add(F, "wrap/body-copied-into-body", m.apply(m.appendChild(m.body, wrapper(B))))
	g.add(F, "wrap/body-copied-after-body", m.apply(m.after(m.body, wrapper(B))))

	// The signed Timestamp moved, an attacker Timestamp in its place.
	if m.timestamp >= 0 && m.created >= 0 {
		T := m.detached(m.timestamp)
		for _, v := range idVariants(m, m.timestamp) {
			atk := m.attackerTimestamp(v)
			g.add(F, "wrap/timestamp-in-header-wrapper/"+v.name, m.apply(m.appendChild(m.header, wrapper(T)), m.replace(m.timestamp, atk)))
			g.add(F, "wrap/timestamp-in-security-wrapper/"+v.name, m.apply(m.appendChild(m.security, wrapper(T)), m.replace(m.timestamp, atk)))
			g.add(F, "wrap/timestamp-in-signature-object/"+v.name, m.apply(
				m.appendChild(m.signature, `<ds:Object xmlns:ds="`+NSDS+`">`+T+`</ds:Object>`), m.replace(m.timestamp, atk)))
		}
		g.add(F, "wrap/timestamp-copied-to-header-wrapper", m.apply(m.appendChild(m.header, wrapper(T))))
	}

	// A second Security header.
	S := m.detached(m.security)
	g.add(F, "wrap/second-security-header-copy", m.apply(m.after(m.security, S)))
	if m.timestamp >= 0 && m.created >= 0 {
		v := idVariants(m, m.timestamp)[0]
		atkSec := m.startTagWith(m.security) + m.attackerTimestamp(v) + m.endTag(m.security)
		g.add(F, "wrap/second-security-header-attacker-first", m.apply(m.before(m.security, atkSec)))
	}
	// The Signature moved out of the Security header.
	Sig := m.detached(m.signature)
	g.add(F, "wrap/signature-in-header-wrapper", m.apply(m.remove(m.signature), m.appendChild(m.header, wrapper(Sig))))
	g.add(F, "wrap/signature-as-header-block", m.apply(m.remove(m.signature), m.appendChild(m.header, Sig)))
	g.add(F, "wrap/signature-in-body", m.apply(m.remove(m.signature), m.appendChild(m.body, Sig)))
	g.add(F, "wrap/signature-in-security-wrapper", m.apply(m.remove(m.signature), m.appendChild(m.security, wrapper(Sig))))
}

// attackerTimestamp returns a Timestamp with the original start tag edited
// by v and fresh, far-future times.
func (m *msg) attackerTimestamp(v idVariant) string {
	c := m.qname(m.created)
	ex := strings.Replace(c, "Created", "Expires", 1)
	return m.startTagWith(m.timestamp, v.edits(m, m.timestamp)...) +
		"<" + c + ">2099-01-01T00:00:00.000Z</" + c + "><" + ex + ">2099-01-01T00:05:00.000Z</" + ex + ">" +
		m.endTag(m.timestamp)
}
