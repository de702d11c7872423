package attack

import (
	"bytes"
	"strings"
)

func (g *gen) parse() {
	m := g.m
	const F = FamilyParse
	root := m.qname(0)
	at := m.declEnd()
	pre := func(s string) edit { return edit{at, at, s} }
	var useAt edit // where an entity reference is used: the Body text or Body content
	if t := m.bodyText(); t >= 0 {
		e := m.el(t)
		useAt = edit{e.StartEnd, e.StartEnd, ""}
	} else {
		useAt = m.prepend(m.body, "")
	}
	use := func(ref string) edit { u := useAt; u.s = ref + u.s; return u }

	dt := func(internal string) string { return "<!DOCTYPE " + root + " [" + internal + "]>" }
	g.add(F, "parse/doctype-empty", m.apply(pre("<!DOCTYPE "+root+">")))
	g.add(F, "parse/doctype-internal-entity-unused", m.apply(pre(dt(`<!ENTITY atk "attack">`))))
	g.add(F, "parse/doctype-internal-entity", m.apply(pre(dt(`<!ENTITY atk "attack">`)), use("&atk;")))
	g.add(F, "parse/doctype-xxe-file", m.apply(pre(dt(`<!ENTITY xxe SYSTEM "file:///etc/passwd">`)), use("&xxe;")))
	g.add(F, "parse/doctype-xxe-http", m.apply(pre(dt(`<!ENTITY xxe SYSTEM "http://127.0.0.1:9/xxe">`)), use("&xxe;")))
	g.add(F, "parse/doctype-external-dtd", m.apply(pre("<!DOCTYPE "+root+` SYSTEM "http://127.0.0.1:9/attack.dtd">`)))
	g.add(F, "parse/doctype-parameter-entity", m.apply(pre(dt(`<!ENTITY % pe SYSTEM "http://127.0.0.1:9/pe.dtd"> %pe;`))))
	g.add(F, "parse/doctype-attlist-id", m.apply(pre(dt(`<!ATTLIST atk:Dup Id ID #IMPLIED>`))))
	g.add(F, "parse/doctype-default-attribute", m.apply(pre(dt(`<!ATTLIST `+m.qname(m.body)+` attack CDATA "1">`))))
	// Entity bombs.
	var lol strings.Builder
	lol.WriteString(`<!ENTITY lol0 "lol">`)
	for i := 1; i <= 10; i++ {
		lol.WriteString(`<!ENTITY lol` + itoa(i) + ` "`)
		for j := 0; j < 10; j++ {
			lol.WriteString("&lol" + itoa(i-1) + ";")
		}
		lol.WriteString(`">`)
	}
	g.add(F, "parse/billion-laughs", m.apply(pre(dt(lol.String())), use("&lol10;")))
	g.add(F, "parse/quadratic-blowup", m.apply(pre(dt(`<!ENTITY a "`+strings.Repeat("A", 50000)+`">`)), use(strings.Repeat("&a;", 2000))))
	g.add(F, "parse/entity-recursive", m.apply(pre(dt(`<!ENTITY a "&b;"><!ENTITY b "&a;">`)), use("&a;")))
	g.add(F, "parse/undeclared-entity", m.apply(use("&nbsp;")))
	g.add(F, "parse/bare-ampersand", m.apply(use("&")))
	g.add(F, "parse/element-directive", m.apply(pre("<!ELEMENT x ANY>")))
	// Processing instructions and declarations.
	g.add(F, "parse/pi-after-declaration", m.apply(pre("<?attack data?>")))
	g.add(F, "parse/pi-stylesheet", m.apply(pre(`<?xml-stylesheet type="text/xsl" href="http://127.0.0.1:9/x.xsl"?>`)))
	g.add(F, "parse/pi-in-header", m.apply(m.prepend(m.header, "<?attack data?>")))
	g.add(F, "parse/pi-in-signedinfo", m.apply(m.prepend(m.signedInfo, "<?attack data?>")))
	g.add(F, "parse/xml-declaration-in-body", m.apply(m.prepend(m.body, `<?xml version="1.0"?>`)))
	g.add(F, "parse/second-xml-declaration", m.apply(pre(`<?xml version="1.0" encoding="UTF-8"?>`)))
	if m.doc.Decl.Len() > 0 {
		decl := string(m.doc.Raw(m.doc.Decl))
		g.add(F, "parse/whitespace-before-declaration", m.apply(edit{m.doc.Decl.Start, m.doc.Decl.Start, " "}))
		for _, enc := range []struct{ name, v string }{{"utf-16", "UTF-16"}, {"iso-8859-1", "ISO-8859-1"}, {"us-ascii", "US-ASCII"}, {"ebcdic", "EBCDIC-CP-US"}} {
			g.add(F, "parse/declared-"+enc.name, m.apply(edit{m.doc.Decl.Start, m.doc.Decl.End, setDeclEncoding(decl, enc.v)}))
		}
		g.add(F, "parse/xml-version-1.1", m.apply(edit{m.doc.Decl.Start, m.doc.Decl.End, strings.Replace(decl, `"1.0"`, `"1.1"`, 1)}))
	} else {
		g.add(F, "parse/declared-utf-16", m.apply(edit{0, 0, `<?xml version="1.0" encoding="UTF-16"?>`}))
	}
	g.add(F, "parse/utf16le-bom", append([]byte{0xFF, 0xFE}, m.data...))
	g.add(F, "parse/utf16-encoded", utf16le(m.data))
	// Roots and trailing content.
	g.add(F, "parse/second-root", m.apply(edit{len(m.data), len(m.data), `<atk:Root xmlns:atk="` + NSAttack + `"/>`}))
	g.add(F, "parse/second-envelope", m.apply(edit{len(m.data), len(m.data), m.bytesOf(0)}))
	g.add(F, "parse/text-after-root", m.apply(edit{len(m.data), len(m.data), "attack"}))
	g.add(F, "parse/comment-before-root", m.apply(pre("<!-- attack -->")))
	g.add(F, "parse/truncated", m.apply(edit{m.el(0).End - 1, len(m.data), ""}))
	g.add(F, "parse/unclosed-body", m.apply(edit{m.el(m.body).EndStart, m.el(m.body).End, ""}))
	g.add(F, "parse/tag-mismatch", m.apply(edit{m.el(m.body).EndStart, m.el(m.body).End, "</" + m.qname(m.body) + "x>"}))
	// Bytes and characters.
	tp := useAt.at
	g.add(F, "parse/invalid-utf8", m.apply(edit{tp, tp, "\xff"}))
	g.add(F, "parse/overlong-utf8", m.apply(edit{tp, tp, "\xc0\xaf"}))
	g.add(F, "parse/utf8-surrogate", m.apply(edit{tp, tp, "\xed\xa0\x80"}))
	g.add(F, "parse/nul-byte", m.apply(edit{tp, tp, "\x00"}))
	g.add(F, "parse/control-char", m.apply(edit{tp, tp, "\x01"}))
	g.add(F, "parse/charref-nul", m.apply(edit{tp, tp, "&#0;"}))
	g.add(F, "parse/charref-surrogate", m.apply(edit{tp, tp, "&#xD800;"}))
	g.add(F, "parse/charref-fffe", m.apply(edit{tp, tp, "&#xFFFE;"}))
	g.add(F, "parse/nul-in-signaturevalue", m.apply(m.prepend(m.sigValue, "\x00")))
	g.add(F, "parse/cdata-end-in-text", m.apply(edit{tp, tp, "]]>"}))
	g.add(F, "parse/lt-in-attribute", m.apply(m.addAttrs(m.body, `attack="a<b"`)))
	// Duplicate attributes.
	if uri, _ := m.doc.LookupPrefix(m.body, "wsu"); m.bodyID != "" && uri == NSWSU {
		g.add(F, "parse/duplicate-attribute-body-id", m.apply(m.addAttrs(m.body, `wsu:Id="id-attacker"`)))
		g.add(F, "parse/duplicate-attribute-body-id-aliased", m.apply(m.addAttrs(m.body, `xmlns:wsu2="`+NSWSU+`" wsu2:Id="id-attacker"`)))
		g.add(F, "parse/duplicate-attribute-body-id-first", m.apply(edit{m.el(m.body).Start + 1 + m.el(m.body).QNameLen(),
			m.el(m.body).Start + 1 + m.el(m.body).QNameLen(), ` xmlns:wsu1="` + NSWSU + `" wsu1:Id="id-attacker"`}))
	}
	if m.tsID != "" {
		g.add(F, "parse/duplicate-attribute-timestamp-id", m.apply(m.addAttrs(m.timestamp, `xmlns:wsu2="`+NSWSU+`" wsu2:Id="id-attacker"`)))
	}
	for _, r := range m.refs[:1] {
		g.add(F, "parse/duplicate-attribute-reference-uri", m.apply(m.addAttrs(r, `URI="#id-attacker"`)))
	}
	g.add(F, "parse/duplicate-namespace-declaration", m.apply(m.addAttrs(m.security, `xmlns:wsse="`+NSWSSE+`"`)))
	// Missing white space between attributes.
	if e, ok := m.noSpaceBetweenAttrs(); ok {
		g.add(F, "parse/no-space-between-attributes", m.apply(e))
	}
	g.add(F, "parse/unquoted-attribute", m.apply(m.addAttrs(m.body, `attack=1`)))
	g.add(F, "parse/attribute-without-value", m.apply(m.addAttrs(m.body, `attack`)))
}

// noSpaceBetweenAttrs removes the white space before the second attribute
// or namespace declaration of the first element that has two.
func (m *msg) noSpaceBetweenAttrs() (edit, bool) {
	for _, i := range []int{m.body, m.timestamp, m.bst, m.security, m.signature} {
		if i < 0 {
			continue
		}
		e := m.el(i)
		tag := m.data[e.Start:e.StartEnd]
		// Find `" ` followed by a name start: the boundary between two
		// attributes.
		for k := 0; k+2 < len(tag); k++ {
			if (tag[k] == '"' || tag[k] == '\'') && tag[k+1] == ' ' && isNameStart(tag[k+2]) {
				return edit{e.Start + k + 1, e.Start + k + 2, ""}, true
			}
		}
	}
	return edit{}, false
}

func isNameStart(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }

func setDeclEncoding(decl, enc string) string {
	i := strings.Index(decl, "encoding=")
	if i < 0 {
		return strings.Replace(decl, "?>", ` encoding="`+enc+`"?>`, 1)
	}
	q := decl[i+len("encoding=")]
	j := strings.IndexByte(decl[i+len("encoding=")+1:], q)
	return decl[:i] + `encoding="` + enc + `"` + decl[i+len("encoding=")+1+j+1:]
}

// utf16le returns data (ASCII/UTF-8 assumed ASCII-compatible) as UTF-16LE
// with a BOM; the declaration keeps saying UTF-8.
func utf16le(data []byte) []byte {
	var b bytes.Buffer
	b.Write([]byte{0xFF, 0xFE})
	for _, r := range string(data) {
		if r > 0xFFFF {
			r = '?'
		}
		b.WriteByte(byte(r))
		b.WriteByte(byte(r >> 8))
	}
	return b.Bytes()
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}
