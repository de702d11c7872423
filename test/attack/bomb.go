package attack

import (
	"strings"

	"github.com/wssgw/wssgw/internal/c14n"
)

// Bomb sizes.
const (
	bombDepth    = 10000
	bombSiblings = 100000
	bombAttrs    = 100000
	bombBase64   = 16 << 20
	bombName     = 100000
	bombNSDecls  = 10000
	bombRefs     = 1000
)

func (g *gen) bomb() {
	m := g.m
	const F = FamilyBomb
	deep := func(n int) string { return strings.Repeat("<d>", n) + strings.Repeat("</d>", n) }
	g.add(F, "bomb/depth-10000", m.apply(m.prepend(m.body, deep(bombDepth))))
	g.add(F, "bomb/depth-10000-header-block", m.apply(m.appendChild(m.header, `<atk:Deep xmlns:atk="`+NSAttack+`">`+deep(bombDepth)+`</atk:Deep>`)))
	g.add(F, "bomb/depth-200", m.apply(m.prepend(m.body, deep(200))))
	g.add(F, "bomb/depth-1000-in-signedinfo", m.apply(m.appendChild(m.signedInfo, `<atk:Deep xmlns:atk="`+NSAttack+`">`+deep(1000)+`</atk:Deep>`)))
	g.add(F, "bomb/siblings-100000", m.apply(m.prepend(m.body, strings.Repeat("<e/>", bombSiblings))))

	var attrs strings.Builder
	for i := 0; i < bombAttrs; i++ {
		if i > 0 {
			attrs.WriteByte(' ')
		}
		attrs.WriteString("a" + itoa(i) + `=""`)
	}
	g.add(F, "bomb/attributes-100000", m.apply(m.addAttrs(m.body, attrs.String())))

	b64 := strings.Repeat("QUFB", bombBase64/4)
	if m.bst >= 0 {
		g.add(F, "bomb/base64-16mib-bst", m.apply(m.setContent(m.bst, b64)))
	} else {
		p := prefixOf(m.qname(m.security))
		g.add(F, "bomb/base64-16mib-bst", m.apply(m.prepend(m.security, "<"+p+`BinarySecurityToken EncodingType="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-soap-message-security-1.0#Base64Binary" ValueType="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-x509-token-profile-1.0#X509v3">`+b64+"</"+p+"BinarySecurityToken>")))
	}
	g.add(F, "bomb/base64-16mib-signaturevalue", m.apply(m.setContent(m.sigValue, b64)))
	if len(m.cipherValues) > 0 {
		g.add(F, "bomb/base64-16mib-ciphervalue", m.apply(m.setContent(m.cipherValues[len(m.cipherValues)-1], b64)))
	}
	g.add(F, "bomb/text-16mib-body", m.apply(m.appendChild(m.body, `<atk:Big xmlns:atk="`+NSAttack+`">`+strings.Repeat("A", bombBase64)+`</atk:Big>`)))
	g.add(F, "bomb/attribute-value-1mib", m.apply(m.addAttrs(m.body, `attack="`+strings.Repeat("A", 1<<20)+`"`)))

	long := strings.Repeat("n", bombName)
	g.add(F, "bomb/name-100000", m.apply(m.appendChild(m.body, "<"+long+"/>")))
	g.add(F, "bomb/attribute-name-100000", m.apply(m.addAttrs(m.body, long+`="1"`)))
	g.add(F, "bomb/prefix-100000", m.apply(m.appendChild(m.body, "<"+long+":x xmlns:"+long+`="urn:attack"/>`)))

	var decls strings.Builder
	for i := 0; i < bombNSDecls; i++ {
		decls.WriteString(` xmlns:n` + itoa(i) + `="urn:attack:` + itoa(i) + `"`)
	}
	g.add(F, "bomb/nsdecls-10000", m.apply(m.addAttrs(m.body, strings.TrimPrefix(decls.String(), " "))))
	g.add(F, "bomb/nsdecls-10000-in-security", m.apply(m.addAttrs(m.security, strings.TrimPrefix(decls.String(), " "))))

	R := m.bytesOf(m.refs[0])
	g.add(F, "bomb/references-1000", m.apply(m.after(m.refs[len(m.refs)-1], strings.Repeat(R, bombRefs))))
	if ts := m.child(m.refs[0], NSDS, "Transforms"); ts >= 0 {
		p := prefixOf(m.qname(ts))
		tr := "<" + p + `Transform Algorithm="` + c14n.AlgExcC14N + `"/>`
		g.add(F, "bomb/transforms-1000", m.apply(m.prepend(ts, strings.Repeat(tr, 1000))))
	}
	g.add(F, "bomb/signatures-100", m.apply(m.after(m.signature, strings.Repeat(m.bytesOf(m.signature), 100))))
	if in := m.child(m.c14nMethod, c14n.AlgExcC14N, "InclusiveNamespaces"); in >= 0 {
		var pl strings.Builder
		for i := 0; i < 10000; i++ {
			pl.WriteString(" p" + itoa(i))
		}
		if e, ok := m.setAttr(in, "", "PrefixList", strings.TrimSpace(pl.String())); ok {
			g.add(F, "bomb/prefixlist-10000", m.apply(e))
		}
	}
}
