package attack

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/wssgw/wssgw/internal/xmlscan"
)

// slot is an element whose whole content is one text value.
type slot struct {
	name   string
	el     int
	base64 bool
}

// slots returns the value slots of the message: DigestValues,
// SignatureValue, CipherValues, Created, Expires, BST and one Body text.
func (m *msg) slots() []slot {
	var s []slot
	for i, dv := range m.digestValues {
		s = append(s, slot{"digestvalue-" + strconv.Itoa(i), dv, true})
	}
	s = append(s, slot{"signaturevalue", m.sigValue, true})
	for i, cv := range m.cipherValues {
		s = append(s, slot{"ciphervalue-" + strconv.Itoa(i), cv, true})
	}
	if m.bst >= 0 {
		s = append(s, slot{"bst", m.bst, true})
	}
	if m.created >= 0 {
		s = append(s, slot{"created", m.created, false})
	}
	if m.expires >= 0 {
		s = append(s, slot{"expires", m.expires, false})
	}
	if t := m.bodyText(); t >= 0 {
		s = append(s, slot{"body-text", t, false})
	}
	var out []slot
	for _, x := range s {
		if e := m.el(x.el); e.EndStart-e.StartEnd >= 2 && m.doc.FirstChild(x.el) < 0 &&
			e.Flags&(xmlscan.FlagComment|xmlscan.FlagCDATA) == 0 {
			out = append(out, x)
		}
	}
	return out
}

// bodyText returns the first element in the Body (not inside EncryptedData)
// with a simple text content of at least 2 bytes without references, or -1.
func (m *msg) bodyText() int {
	for i := m.body + 1; i < m.el(m.body).Next; i++ {
		e := m.el(i)
		if e.Space == NSXEnc {
			return -1
		}
		raw := m.data[e.StartEnd:e.EndStart]
		if m.doc.FirstChild(i) < 0 && len(bytes.TrimSpace(raw)) >= 2 && bytes.IndexByte(raw, '&') < 0 && e.Flags&xmlscan.FlagEmpty == 0 {
			return i
		}
	}
	return -1
}

// flipPos returns the offset in the content of slot s of the character to
// change so that the decoded value changes: for base64 the first character
// of a middle quantum, otherwise the middle alphanumeric character.
func (m *msg) flipPos(s slot) int {
	e := m.el(s.el)
	raw := m.data[e.StartEnd:e.EndStart]
	var pos []int
	for i, c := range raw {
		if s.base64 && isB64(c) || !s.base64 && isAlnum(c) {
			pos = append(pos, i)
		}
	}
	if len(pos) == 0 {
		return e.StartEnd
	}
	k := len(pos) / 2
	if s.base64 {
		k = k / 4 * 4
	}
	return e.StartEnd + pos[k]
}

func isB64(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/'
}
func isAlnum(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
}

// other returns a character different from c of the same class.
func other(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return '0' + (c-'0'+1)%10
	case c >= 'a' && c <= 'z':
		return 'a' + (c-'a'+1)%26
	case c >= 'A' && c <= 'Z':
		return 'A' + (c-'A'+1)%26
	}
	return 'A'
}

// midSplit returns a split offset inside the content of s, away from a
// character reference.
func (m *msg) midSplit(s slot) int {
	e := m.el(s.el)
	p := e.StartEnd + (e.EndStart-e.StartEnd)/2
	for p < e.EndStart && !isAlnum(m.data[p]) {
		p++
	}
	return p
}

func (g *gen) value() {
	m := g.m
	const F = FamilyValue
	for _, s := range m.slots() {
		e := m.el(s.el)
		mid := m.midSplit(s)
		// Text-node splitting (Duo 2018, xml-crypto CVE-2025-29775): the
		// decoded value is unchanged, so exc-c14n verifiers still accept;
		// the gate must reject comments, CDATA and PIs in the Security
		// header and in signed parts.
		g.add(F, "value/comment-in-"+s.name, m.apply(edit{mid, mid, "<!---->"}))
		g.add(F, "value/comment-text-in-"+s.name, m.apply(edit{mid, mid, "<!--attack-->"}))
		g.add(F, "value/cdata-in-"+s.name, m.apply(edit{mid, e.EndStart, "<![CDATA[" + string(m.data[mid:e.EndStart]) + "]]>"}))
		g.add(F, "value/pi-in-"+s.name, m.apply(edit{mid, mid, "<?attack x?>"}))
		// A character reference to a different character: a byte slicer
		// and a decoder see two different wrong values.
		p := m.flipPos(s)
		g.add(F, "value/charref-altered-in-"+s.name, m.apply(edit{p, p + 1, "&#" + strconv.Itoa(int(other(m.data[p]))) + ";"}))
		// An element inside the value.
		g.add(F, "value/element-in-"+s.name, m.apply(edit{mid, mid, `<atk:x xmlns:atk="` + NSAttack + `"/>`}))
		// An entity reference that decodes to markup-like text.
		g.add(F, "value/entity-lt-in-"+s.name, m.apply(edit{mid, mid, "&lt;"}))
	}
	// Text-node splitting that changes nothing but splits a signed value in
	// two for a byte slicer, the Duo shape: "attacker<!---->.victim".
	if t := m.bodyText(); t >= 0 {
		e := m.el(t)
		g.add(F, "value/comment-prefix-in-body-text", m.apply(edit{e.StartEnd, e.StartEnd, "<!--x-->"}))
		g.add(F, "value/comment-suffix-in-body-text", m.apply(edit{e.EndStart, e.EndStart, "<!--x-->"}))
	}
	// Comments between elements of the Security header and the Body.
	g.add(F, "value/comment-in-security", m.apply(m.prepend(m.security, "<!-- attack -->")))
	g.add(F, "value/comment-in-signedinfo", m.apply(m.prepend(m.signedInfo, "<!-- attack -->")))
	g.add(F, "value/comment-in-body", m.apply(m.prepend(m.body, "<!-- attack -->")))
	// Whitespace is legal in base64, but not inside an xsd:dateTime token
	// nor inside a Reference URI.
	if m.created >= 0 {
		p := m.flipPos(slot{"created", m.created, false})
		g.add(F, "value/space-inside-created", m.apply(edit{p, p, " "}))
	}
	if r := m.refTo(m.bodyID); r >= 0 {
		g.add(F, "value/space-inside-reference-uri", m.apply(m.replace(r, m.refWithURI(r, "# "+m.bodyID))))
		g.add(F, "value/charref-hash-in-reference-uri", m.apply(m.replace(r, m.refWithURI(r, "#"+m.bodyID+"&#x20;"))))
	}
}

func (g *gen) tamper() {
	m := g.m
	const F = FamilyTamper
	for _, s := range m.slots() {
		e := m.el(s.el)
		p := m.flipPos(s)
		g.add(F, "tamper/flip-"+s.name, m.apply(edit{p, p + 1, string(other(m.data[p]))}))
		if s.base64 {
			raw := strings.TrimSpace(string(m.data[e.StartEnd:e.EndStart]))
			if len(raw) > 8 {
				g.add(F, "tamper/truncate-"+s.name, m.apply(m.setContent(s.el, raw[:len(raw)-4])))
				g.add(F, "tamper/truncate-1-"+s.name, m.apply(m.setContent(s.el, raw[:len(raw)-1])))
			}
			g.add(F, "tamper/invalid-base64-"+s.name, m.apply(edit{p, p + 1, "!"}))
			g.add(F, "tamper/zero-"+s.name, m.apply(m.setContent(s.el, strings.Repeat("A", len(raw)-len(raw)%4))))
			g.add(F, "tamper/empty-"+s.name, m.apply(m.setContent(s.el, "")))
			g.add(F, "tamper/doubled-"+s.name, m.apply(m.setContent(s.el, raw+raw)))
		}
	}
	// Expired and future Timestamps (the signature breaks as well; a
	// correctly signed stale message is the replay/clock harness's job).
	if m.created >= 0 && m.expires >= 0 {
		cq, eq := m.qname(m.created), m.qname(m.expires)
		ts := func(c, x string) edit {
			return m.setContent(m.timestamp, "<"+cq+">"+c+"</"+cq+"><"+eq+">"+x+"</"+eq+">")
		}
		g.add(F, "tamper/timestamp-expired", m.apply(ts("2000-01-01T00:00:00.000Z", "2000-01-01T00:05:00.000Z")))
		g.add(F, "tamper/timestamp-future", m.apply(ts("2099-01-01T00:00:00.000Z", "2099-01-01T00:05:00.000Z")))
		g.add(F, "tamper/timestamp-long-lived", m.apply(ts(m.text(m.created), "2099-01-01T00:00:00.000Z")))
		g.add(F, "tamper/timestamp-expires-before-created", m.apply(ts(m.text(m.created), "2000-01-01T00:00:00.000Z")))
	}
	// The Body payload.
	if len(m.encData) == 0 {
		g.add(F, "tamper/body-payload-replaced", m.apply(m.setContent(m.body, attackerPayload)))
	}
	g.add(F, "tamper/body-emptied", m.apply(m.setContent(m.body, "")))
	g.add(F, "tamper/body-element-appended", m.apply(m.appendChild(m.body, attackerPayload)))
	// Only a plaintext payload: the attributes of a Body EncryptedData are
	// replaced by decryption and are not signed under sign-then-encrypt.
	if c := m.doc.FirstChild(m.body); c >= 0 && m.el(c).Space != NSXEnc {
		g.add(F, "tamper/body-attribute-added", m.apply(m.addAttrs(c, `attack="1"`)))
		for i := c; i < m.el(m.body).Next; i++ {
			if as := m.doc.AttrsOf(i); len(as) > 0 && as[0].Value.Len() > 0 && m.el(i).Space != NSXEnc {
				a := as[0]
				p := a.Value.Start
				g.add(F, "tamper/body-attribute-value", m.apply(edit{p, p + 1, string(other(m.data[p]))}))
				break
			}
		}
	}
	g.add(F, "tamper/body-whitespace-appended", m.apply(m.appendChild(m.body, " ")))
	// Attributes in the Security header the signature covers.
	if m.tsID != "" {
		if e, ok := m.setAttr(m.timestamp, NSWSU, "Id", m.tsID+"x"); ok {
			g.add(F, "tamper/timestamp-id", m.apply(e))
		}
	}
	if m.bodyID != "" {
		if e, ok := m.setAttr(m.body, NSWSU, "Id", m.bodyID+"x"); ok {
			g.add(F, "tamper/body-id", m.apply(e))
		}
	}
	for _, ed := range m.encData {
		if e, ok := m.setAttr(ed, "", "Id", "ED-attacker"); ok {
			g.add(F, "tamper/encrypteddata-id", m.apply(e))
			break
		}
	}
}
