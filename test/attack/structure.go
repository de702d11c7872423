package attack

import (
	"strconv"
	"strings"
)

func (g *gen) structure() {
	m := g.m
	const F = FamilyStructure
	// The Timestamp (BSP R3227, R3203, R3217, R3213; security.md E3).
	if m.timestamp >= 0 {
		T := m.bytesOf(m.timestamp)
		g.add(F, "struct/no-timestamp", m.apply(m.remove(m.timestamp)))
		g.add(F, "struct/two-timestamps-same-id", m.apply(m.after(m.timestamp, T)))
		if m.tsID != "" {
			e, _ := m.setAttr(m.timestamp, NSWSU, "Id", "TS-attacker")
			g.add(F, "struct/two-timestamps-other-id", m.apply(m.after(m.timestamp, m.elementWith(m.timestamp, e))))
			g.add(F, "struct/two-timestamps-attacker-first", m.apply(m.before(m.timestamp, m.elementWith(m.timestamp, e))))
		}
		g.add(F, "struct/timestamp-unknown-child", m.apply(m.appendChild(m.timestamp, `<atk:x xmlns:atk="`+NSAttack+`"/>`)))
		g.add(F, "struct/timestamp-in-body", m.apply(m.remove(m.timestamp), m.appendChild(m.body, m.detached(m.timestamp))))
	}
	if m.created >= 0 {
		C := m.bytesOf(m.created)
		c := m.text(m.created)
		g.add(F, "struct/timestamp-two-created", m.apply(m.after(m.created, C)))
		g.add(F, "struct/timestamp-no-created", m.apply(m.remove(m.created)))
		if strings.HasSuffix(c, "Z") {
			g.add(F, "struct/created-without-z", m.apply(m.setContent(m.created, strings.TrimSuffix(c, "Z"))))
			g.add(F, "struct/created-with-offset", m.apply(m.setContent(m.created, strings.TrimSuffix(c, "Z")+"+00:00")))
			g.add(F, "struct/created-with-plus-one", m.apply(m.setContent(m.created, strings.TrimSuffix(c, "Z")+"+01:00")))
		}
		if len(c) >= 19 && c[16] == ':' {
			g.add(F, "struct/created-seconds-60", m.apply(m.setContent(m.created, c[:17]+"60"+c[19:])))
			g.add(F, "struct/created-hour-24", m.apply(m.setContent(m.created, c[:11]+"24"+c[13:])))
		}
		g.add(F, "struct/created-fraction-extra-digits", m.apply(m.setContent(m.created, fraction9(c))))
		g.add(F, "struct/created-not-a-date", m.apply(m.setContent(m.created, "yesterday")))
	}
	if m.expires >= 0 {
		g.add(F, "struct/timestamp-no-expires", m.apply(m.remove(m.expires)))
		g.add(F, "struct/timestamp-two-expires", m.apply(m.after(m.expires, m.bytesOf(m.expires))))
	}
	// Encryption structure (A11).
	for k, ed := range m.encData {
		n := "encrypteddata-" + strconv.Itoa(k)
		ED := m.detached(ed)
		if inside(m.doc, ed, m.body) {
			g.add(F, "struct/"+n+"-moved-to-header", m.apply(m.remove(ed), m.appendChild(m.header, wrapper(ED))))
			g.add(F, "struct/"+n+"-moved-to-security", m.apply(m.remove(ed), m.appendChild(m.security, ED)))
			g.add(F, "struct/"+n+"-moved-replaced", m.apply(m.replace(ed, attackerPayload), m.appendChild(m.header, wrapper(ED))))
		}
		g.add(F, "struct/"+n+"-duplicated", m.apply(m.after(ed, ED)))
		g.add(F, "struct/"+n+"-copied-to-header", m.apply(m.appendChild(m.header, wrapper(ED))))
		typ := m.attr(ed, "", "Type")
		flip := ""
		switch {
		case strings.HasSuffix(typ, "#Content"):
			flip = strings.TrimSuffix(typ, "Content") + "Element"
		case strings.HasSuffix(typ, "#Element"):
			flip = strings.TrimSuffix(typ, "Element") + "Content"
		}
		if flip != "" {
			e, _ := m.setAttr(ed, "", "Type", flip)
			g.add(F, "struct/"+n+"-type-flipped", m.apply(e))
			_, rm, _ := m.attrSpan(ed, "", "Type")
			g.add(F, "struct/"+n+"-type-removed", m.apply(rm))
		}
	}
	if m.encKey >= 0 {
		g.add(F, "struct/encryptedkey-removed", m.apply(m.remove(m.encKey)))
		g.add(F, "struct/encryptedkey-duplicated", m.apply(m.after(m.encKey, m.bytesOf(m.encKey))))
		for i := m.encKey + 1; i < m.el(m.encKey).Next; i++ {
			if e := m.el(i); e.Space == NSXEnc && e.Local == "DataReference" {
				if ed, ok := m.setAttr(i, "", "URI", "#ED-does-not-exist"); ok {
					g.add(F, "struct/datareference-dangling", m.apply(ed))
				}
				g.add(F, "struct/datareference-duplicated", m.apply(m.after(i, m.bytesOf(i))))
				break
			}
		}
	}
	// The Signature and the Security header.
	g.add(F, "struct/no-signature", m.apply(m.remove(m.signature)))
	g.add(F, "struct/two-signatures", m.apply(m.after(m.signature, m.bytesOf(m.signature))))
	g.add(F, "struct/signedinfo-twice", m.apply(m.after(m.signedInfo, m.bytesOf(m.signedInfo))))
	g.add(F, "struct/no-signaturevalue", m.apply(m.remove(m.sigValue)))
	if m.keyInfo >= 0 {
		g.add(F, "struct/no-keyinfo", m.apply(m.remove(m.keyInfo)))
	}
	if m.bst >= 0 {
		g.add(F, "struct/no-bst", m.apply(m.remove(m.bst)))
		g.add(F, "struct/bst-duplicated", m.apply(m.after(m.bst, m.bytesOf(m.bst))))
	}
	g.add(F, "struct/signature-manifest-object", m.apply(m.appendChild(m.signature,
		`<ds:Object xmlns:ds="`+NSDS+`"><ds:Manifest><ds:Reference URI="#`+m.bodyID+`"><ds:DigestMethod Algorithm="`+algSHA256+`"/><ds:DigestValue>AAAA</ds:DigestValue></ds:Reference></ds:Manifest></ds:Object>`)))
	g.add(F, "struct/no-security-header", m.apply(m.remove(m.security)))
	g.add(F, "struct/empty-security-header", m.apply(m.setContent(m.security, "")))
	role := "actor"
	if m.soap12 {
		role = "role"
	}
	g.add(F, "struct/security-for-other-"+role, m.apply(m.addAttrs(m.security, `xmlns:atksoap="`+m.soapNS+`" atksoap:`+role+`="urn:attack:other"`)))
	g.add(F, "struct/security-in-body", m.apply(m.remove(m.security), m.prepend(m.body, m.detached(m.security))))
	g.add(F, "struct/header-after-body", m.apply(m.remove(m.header), m.after(m.body, m.detached(m.header))))
	g.add(F, "struct/no-body", m.apply(m.remove(m.body)))
	g.add(F, "struct/two-headers", m.apply(m.before(m.body, m.startTagWith(m.header)+m.endTag(m.header))))
	g.add(F, "struct/envelope-in-envelope", m.apply(edit{m.el(0).Start, m.el(0).End,
		"<" + m.qname(0) + ` xmlns` + colon(m.el(0).Prefix) + `="` + m.soapNS + `"><` + q(m, "Body") + ">" + m.bytesOf(0) + "</" + q(m, "Body") + "></" + m.qname(0) + ">"}))
}

func colon(p string) string {
	if p == "" {
		return ""
	}
	return ":" + p
}

// q returns the SOAP element local qualified with the Envelope's prefix.
func q(m *msg, local string) string {
	if p := m.el(0).Prefix; p != "" {
		return p + ":" + local
	}
	return local
}

// fraction9 gives a dateTime six more fractional digits (BSP R3220 allows
// at most three).
func fraction9(c string) string {
	if i := strings.IndexByte(c, '.'); i >= 0 {
		j := i + 1
		for j < len(c) && c[j] >= '0' && c[j] <= '9' {
			j++
		}
		return c[:j] + "111111" + c[j:]
	}
	return strings.Replace(c, "Z", ".123456789Z", 1)
}
