package attack

import (
	"fmt"
	"strings"
)

// The "around the engine" classes of issue 13: content that no signature
// covers and that a gateway forwarding verified bytes could still let
// through, because it lies outside the signed parts (between the SOAP
// Envelope's children, between header blocks, on the Envelope and Header
// start tags) or outside the XML altogether (the HTTP Content-Type).
//
// Three generators, by expected verdict:
//   - the envelope family of Mutate (FamilyEnvelope): character data,
//     CDATA sections and comments directly inside soap:Envelope or
//     soap:Header, elements after the Body (WS-I Basic Profile 1.1 R1011),
//     a Header or Body of the other SOAP version, a non-UTF-8 XML
//     declaration. Every one must be rejected, like every other mutant.
//   - Injections (FamilyUnsigned): unsigned header blocks and foreign
//     attributes on Envelope and Header. Under the default unsigned-content
//     policy (unsignedHeaders: strip) the message is accepted and the
//     injected content must not be in the forwarded bytes; under reject it
//     is refused; unsignedAllow lets a named QName through.
//   - Labels: the unchanged message under a Content-Type that disagrees
//     with its bytes: a charset other than UTF-8 (415) or the other SOAP
//     version (VersionMismatch). The engines never see a label, so these
//     are for tests that go through the gateway.

// FamilyEnvelope is the family of Mutate's envelope mutants.
const FamilyEnvelope = "envelope"

// FamilyUnsigned is the family of Injections. Like FamilyReplay it is not
// one of Families(): an injection is accepted under the default policy.
const FamilyUnsigned = "unsigned"

// fakeBody is a complete SOAP Body with the attacker's payload, written
// with the envelope's prefix: what a backend that scans for "<...:Body>"
// or reads CDATA as markup would take for the request.
func (m *msg) fakeBody() string {
	return "<" + q(m, "Body") + ">" + attackerPayload + "</" + q(m, "Body") + ">"
}

// otherSOAP is the namespace of the SOAP version the message does not use.
func (m *msg) otherSOAP() string {
	if m.soap12 {
		return NSSOAP11
	}
	return NSSOAP12
}

// envelope adds the envelope family. SOAP 1.1 §4.1.1 and SOAP 1.2 part 1
// §5.1 give soap:Envelope and soap:Header element children only; character
// data there is ignored by SOAP processors and XML Signature alike, so it
// is never covered by a signature, yet it is forwarded with the envelope
// and a backend that reads text or re-parses CDATA sees the attacker's
// markup (issue 13 item 7). Comments there are not signed content either
// (issue 13 item 8).
func (g *gen) envelope() {
	m := g.m
	const F = FamilyEnvelope
	places := []struct {
		name string
		at   func(s string) edit
	}{
		{"before-header", func(s string) edit { return m.before(m.header, s) }},
		{"between-header-and-body", func(s string) edit { return m.after(m.header, s) }},
		{"after-body", func(s string) edit { return m.after(m.body, s) }},
		{"before-security", func(s string) edit { return m.before(m.security, s) }},
		{"after-security", func(s string) edit { return m.after(m.security, s) }},
	}
	contents := []struct{ name, s string }{
		{"text", "attack"},
		{"escaped-body", strings.NewReplacer("<", "&lt;", ">", "&gt;").Replace(m.fakeBody())},
		{"cdata-fake-body", "<![CDATA[" + m.fakeBody() + "]]>"},
		{"comment", "<!--" + m.fakeBody() + "-->"},
	}
	for _, c := range contents {
		for _, p := range places {
			g.add(F, "env/"+c.name+"-"+p.name, m.apply(p.at(c.s)))
		}
	}
	// Text around the envelope: outside the root (XML 1.0 §2.1, the gate's
	// KindOutsideRoot), kept here as the regression of the same class.
	g.add(F, "env/comment-after-envelope", m.apply(m.after(0, "<!--"+m.fakeBody()+"-->")))
	g.add(F, "env/text-after-envelope", m.apply(m.after(0, "attack")))

	// Element children of the Envelope other than one Header and one
	// Body: WS-I Basic Profile 1.1 R1011 forbids anything after the Body,
	// and SOAP 1.2 §5.1 anything at all; a Header or Body of the other
	// SOAP version is what a version-confused backend would read.
	other := m.otherSOAP()
	g.add(F, "env/element-after-body", m.apply(m.after(m.body, `<atk:Extra xmlns:atk="`+NSAttack+`">`+attackerPayload+`</atk:Extra>`)))
	g.add(F, "env/other-version-header-before-header", m.apply(m.before(m.header,
		`<v:Header xmlns:v="`+other+`"><x:Admin xmlns:x="urn:x">true</x:Admin></v:Header>`)))
	g.add(F, "env/other-version-body-after-body", m.apply(m.after(m.body,
		`<v:Body xmlns:v="`+other+`">`+attackerPayload+`</v:Body>`)))

	// A charset label in the declaration: UTF-7 reads "+ADw-" as "<"
	// (RFC 2152), so the bytes a backend decodes are not the ones verified.
	// wssgw reads UTF-8 only (XML 1.0 §4.3.3 lets a processor refuse other
	// encodings).
	decl := `<?xml version="1.0" encoding="UTF-7"?>`
	if m.doc.Decl.Len() > 0 {
		decl = setDeclEncoding(string(m.doc.Raw(m.doc.Decl)), "UTF-7")
		g.add(F, "env/declared-utf-7", m.apply(edit{m.doc.Decl.Start, m.doc.Decl.End, decl}))
	} else {
		g.add(F, "env/declared-utf-7", m.apply(edit{0, 0, decl}))
	}
}

// Injection is a message with content that no signature covers added
// outside the signed parts, where a gateway decides by its unsigned-content
// policy (unsignedHeaders: strip | reject | forward, unsignedAllow).
type Injection struct {
	Mutant
	// Injected are byte strings that occur in Data and not in the
	// original: under strip none of them may reach the backend, under
	// forward (or when Allow is allowed) all of them must.
	Injected []string
	// Allow is the unsignedAllow entry, "{namespace}local", that lets the
	// injected header block or attribute pass unsigned.
	Allow string
	// Never are byte strings (comments) that may not reach the backend in
	// any mode: a comment is never signed content (exclusive C14N drops
	// it), so no unsignedHeaders mode forwards one.
	Never []string
}

// Injections returns the unsigned-content variants of msg, a message
// Mutate accepts. Each adds one header block or one attribute that no
// signature covers (issue 13 item 8): a legacy backend may act on an
// unsigned WS-Addressing header, a routing or tenant header, or a role
// attribute, so a gateway strips them (the default), refuses the message,
// or forwards them only when told to.
func Injections(msg []byte) ([]Injection, error) {
	m, err := parse(msg)
	if err != nil {
		return nil, err
	}
	var out []Injection
	seen := map[string]bool{}
	add := func(name, allow string, data []byte, injected ...string) error {
		if seen[name] {
			return fmt.Errorf("attack: duplicate injection name %q", name)
		}
		seen[name] = true
		for _, s := range injected {
			if strings.Contains(string(msg), s) {
				return fmt.Errorf("attack: injection %s: %q is already in the message", name, s)
			}
		}
		out = append(out, Injection{Mutant: Mutant{Name: name, Family: FamilyUnsigned, Data: data}, Injected: injected, Allow: allow})
		return nil
	}
	const admin = `<x:Admin xmlns:x="urn:x">true</x:Admin>`
	const adminQName = "{urn:x}Admin"
	mu := "1"
	if m.soap12 {
		mu = "true"
	}
	// soapAttr is an attribute in the SOAP namespace, declared afresh so
	// that an Envelope in the default namespace gets a prefix.
	soapAttr := func(local, v string) string {
		return `xmlns:atksoap="` + m.soapNS + `" atksoap:` + local + `="` + v + `"`
	}
	wsaTo := `<wsa:To xmlns:wsa="http://www.w3.org/2005/08/addressing">http://attacker.example/admin</wsa:To>`
	for _, e := range []error{
		add("unsigned/header-block-first", adminQName, m.apply(m.before(m.security, admin)), "x:Admin"),
		add("unsigned/header-block-last", adminQName, m.apply(m.after(m.security, admin)), "x:Admin"),
		add("unsigned/header-block-mustunderstand", adminQName, m.apply(m.after(m.security,
			`<x:Admin xmlns:x="urn:x" `+soapAttr("mustUnderstand", mu)+`>true</x:Admin>`)), "x:Admin"),
		add("unsigned/header-block-with-comment", adminQName, m.apply(m.after(m.security,
			`<x:Admin xmlns:x="urn:x"><!--unsigned-->true</x:Admin>`)), "x:Admin"),
		add("unsigned/wsa-to", "{http://www.w3.org/2005/08/addressing}To", m.apply(m.before(m.security, wsaTo)), "attacker.example"),
		add("unsigned/envelope-attribute", "{urn:y}role", m.apply(m.addAttrs(0, `xmlns:y="urn:y" y:role="admin"`)), `y:role="admin"`),
		add("unsigned/header-attribute", "{urn:y}role", m.apply(m.addAttrs(m.header, `xmlns:y="urn:y" y:role="admin"`)), `y:role="admin"`),
		add("unsigned/envelope-attribute-soap-ns", "{"+m.soapNS+"}encodingStyle",
			m.apply(m.addAttrs(0, soapAttr("encodingStyle", "urn:attack"))), `encodingStyle="urn:attack"`),
	} {
		if e != nil {
			return nil, e
		}
	}
	for i := range out {
		if out[i].Name == "unsigned/header-block-with-comment" {
			out[i].Never = []string{"<!--unsigned-->"}
		}
	}
	return out, nil
}

// Label is the unchanged message sent under a Content-Type that disagrees
// with its bytes.
type Label struct {
	Name        string
	ContentType string
	// VersionMismatch is true when the label announces the other SOAP
	// version (a VersionMismatch fault is expected); false when it carries
	// a charset other than UTF-8 (415): the gateway verified UTF-8 bytes,
	// a backend that honours the label reads other characters (issue 13
	// items 4 and 5).
	VersionMismatch bool
}

// Labels returns the Content-Types msg must be refused under.
func Labels(msg []byte) ([]Label, error) {
	m, err := parse(msg)
	if err != nil {
		return nil, err
	}
	own, other := "text/xml", "application/soap+xml"
	if m.soap12 {
		own, other = other, own
	}
	var out []Label
	for _, c := range []struct{ name, param string }{
		{"iso-8859-1", "charset=iso-8859-1"}, {"utf-7", "charset=utf-7"}, {"utf-16", "charset=utf-16"},
		{"utf-16le-quoted", `charset="UTF-16LE"`}, {"windows-1252-upper", "CHARSET=WINDOWS-1252"},
		{"utf-8-then-utf-16", "charset=utf-8; charset=utf-16"},
	} {
		out = append(out, Label{Name: "label/charset-" + c.name, ContentType: own + "; " + c.param})
	}
	out = append(out,
		Label{Name: "label/other-version", ContentType: other + "; charset=utf-8", VersionMismatch: true},
		Label{Name: "label/other-version-no-charset", ContentType: other, VersionMismatch: true})
	return out, nil
}
