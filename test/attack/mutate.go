package attack

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/wssgw/wssgw/internal/xmlscan"
)

// Mutant is one hostile variant of a message.
type Mutant struct {
	// Name identifies the mutant, unique within one Mutate result, e.g.
	// "wrap/body-in-header-wrapper/id-kept". The part before the first
	// slash is a short form of the family.
	Name string
	// Family is one of Families().
	Family string
	// Data is the complete message.
	Data []byte
}

// Resigner signs an envelope with an attacker's key. It receives a SOAP
// envelope without a wsse:Security header (the Header may be empty) and
// returns it with a new wsse:Security header carrying the attacker's
// signature over (at least) the Body and a fresh Timestamp.
type Resigner func(envelope []byte) ([]byte, error)

// Family names.
const (
	FamilyWrapping  = "wrapping"
	FamilyReference = "reference"
	FamilyAlgorithm = "algorithm"
	FamilyHMAC      = "hmac"
	FamilyKey       = "key"
	FamilyValue     = "value"
	FamilyParse     = "parse"
	FamilyNamespace = "namespace"
	FamilyBomb      = "bomb"
	FamilyStructure = "structure"
	FamilyTamper    = "tamper"

	// FamilyReplay is used only by Replays; it is not one of Families()
	// because a replay is not rejectable on its own.
	FamilyReplay = "replay"
)

// Families returns the closed list of family names Mutate uses.
func Families() []string {
	return []string{FamilyWrapping, FamilyReference, FamilyAlgorithm, FamilyHMAC, FamilyKey,
		FamilyValue, FamilyParse, FamilyNamespace, FamilyBomb, FamilyStructure, FamilyTamper, FamilyEnvelope}
}

// Namespace URIs.
const (
	NSSOAP11 = "http://schemas.xmlsoap.org/soap/envelope/"
	NSSOAP12 = "http://www.w3.org/2003/05/soap-envelope"
	NSWSSE   = xmlscan.NamespaceWSSE
	NSWSSE11 = xmlscan.NamespaceWSSE11
	NSWSU    = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd"
	NSDS     = xmlscan.NamespaceDSig
	NSXEnc   = xmlscan.NamespaceXEnc
	// NSAttack is the namespace of the attacker's wrapper elements.
	NSAttack = "urn:wssgw:attack"
)

// ErrNotSecured is returned when the input lacks what Mutate needs: a SOAP
// envelope with a Body and a wsse:Security header holding a ds:Signature.
var ErrNotSecured = errors.New("attack: not a signed WS-Security SOAP message")

// Mutate returns every applicable mutant of msg, a valid WS-Security SOAP
// message (SOAP 1.1 or 1.2) with a wsse:Security header holding a
// ds:Signature over (at least) the Body and a wsu:Timestamp. Each mutant
// differs from msg and names are unique.
func Mutate(msg []byte) ([]Mutant, error) {
	return MutateWithResigner(msg, nil)
}

// MutateWithResigner is Mutate plus, when attacker is not nil, mutants that
// strip the Security header and have attacker re-sign the (possibly altered)
// envelope: a self-issued or otherwise untrusted key with a valid
// signature.
func MutateWithResigner(msg []byte, attacker Resigner) ([]Mutant, error) {
	m, err := parse(msg)
	if err != nil {
		return nil, err
	}
	g := &gen{m: m, seen: map[string]bool{}}
	g.wrapping()
	g.reference()
	g.algorithm()
	g.hmac()
	g.key()
	if attacker != nil {
		if err := g.resigned(attacker); err != nil {
			return nil, err
		}
	}
	g.value()
	g.tamper()
	g.parse()
	g.namespace()
	g.bomb()
	g.structure()
	g.envelope()
	if g.err != nil {
		return nil, g.err
	}
	return g.out, nil
}

// gen collects mutants.
type gen struct {
	m    *msg
	out  []Mutant
	seen map[string]bool
	err  error
}

func (g *gen) add(family, name string, data []byte) {
	if g.err != nil {
		return
	}
	if g.seen[name] {
		g.err = fmt.Errorf("attack: duplicate mutant name %q", name)
		return
	}
	if bytes.Equal(data, g.m.data) {
		g.err = fmt.Errorf("attack: mutant %q equals the input", name)
		return
	}
	g.seen[name] = true
	g.out = append(g.out, Mutant{Name: name, Family: family, Data: data})
}

// msg is a scanned input with the elements the generator needs located.
type msg struct {
	data []byte
	doc  *xmlscan.Document

	soapNS string
	soap12 bool

	header, body, security      int
	signature, signedInfo       int
	sigMethod, c14nMethod       int
	sigValue, keyInfo           int
	timestamp, created, expires int
	bst                         int
	refs, digestValues          []int
	digestMethods               []int
	encKey                      int
	encData                     []int
	cipherValues                []int
	encMethods                  []int

	bodyID, tsID string
}

func parse(data []byte) (*msg, error) {
	m := &msg{data: data, doc: &xmlscan.Document{}}
	if err := xmlscan.Scan(data, m.doc); err != nil {
		return nil, fmt.Errorf("attack: input rejected by the gate: %w", err)
	}
	d := m.doc
	for _, v := range []*int{&m.header, &m.body, &m.security, &m.signature, &m.signedInfo, &m.sigMethod,
		&m.c14nMethod, &m.sigValue, &m.keyInfo, &m.timestamp, &m.created, &m.expires, &m.bst, &m.encKey} {
		*v = -1
	}
	root := d.Root()
	if root.Local != "Envelope" || (root.Space != NSSOAP11 && root.Space != NSSOAP12) {
		return nil, ErrNotSecured
	}
	m.soapNS, m.soap12 = root.Space, root.Space == NSSOAP12
	for c := d.FirstChild(0); c >= 0; c = d.NextSibling(c) {
		e := &d.Elements[c]
		if e.Space == m.soapNS && e.Local == "Header" && m.header < 0 {
			m.header = c
		}
		if e.Space == m.soapNS && e.Local == "Body" && m.body < 0 {
			m.body = c
		}
	}
	if m.header < 0 || m.body < 0 {
		return nil, ErrNotSecured
	}
	for c := d.FirstChild(m.header); c >= 0; c = d.NextSibling(c) {
		if e := &d.Elements[c]; e.Space == NSWSSE && e.Local == "Security" {
			m.security = c
			break
		}
	}
	if m.security < 0 {
		return nil, ErrNotSecured
	}
	for c := d.FirstChild(m.security); c >= 0; c = d.NextSibling(c) {
		e := &d.Elements[c]
		switch {
		case e.Space == NSDS && e.Local == "Signature" && m.signature < 0:
			m.signature = c
		case e.Space == NSWSU && e.Local == "Timestamp" && m.timestamp < 0:
			m.timestamp = c
		case e.Space == NSWSSE && e.Local == "BinarySecurityToken" && m.bst < 0:
			m.bst = c
		case e.Space == NSXEnc && e.Local == "EncryptedKey" && m.encKey < 0:
			m.encKey = c
		}
	}
	if m.signature < 0 {
		return nil, ErrNotSecured
	}
	for i := 0; i < len(d.Elements); i++ {
		e := &d.Elements[i]
		switch {
		case e.Space == NSDS && inside(d, i, m.signature):
			switch e.Local {
			case "SignedInfo":
				if m.signedInfo < 0 {
					m.signedInfo = i
				}
			case "SignatureMethod":
				m.sigMethod = i
			case "CanonicalizationMethod":
				m.c14nMethod = i
			case "SignatureValue":
				m.sigValue = i
			case "KeyInfo":
				if d.Elements[i].Parent == m.signature {
					m.keyInfo = i
				}
			case "Reference":
				m.refs = append(m.refs, i)
			case "DigestValue":
				m.digestValues = append(m.digestValues, i)
			case "DigestMethod":
				m.digestMethods = append(m.digestMethods, i)
			}
		case e.Space == NSWSU && e.Parent == m.timestamp && m.timestamp >= 0:
			if e.Local == "Created" && m.created < 0 {
				m.created = i
			}
			if e.Local == "Expires" && m.expires < 0 {
				m.expires = i
			}
		case e.Space == NSXEnc && e.Local == "EncryptedData":
			m.encData = append(m.encData, i)
		case e.Space == NSXEnc && e.Local == "CipherValue":
			m.cipherValues = append(m.cipherValues, i)
		case e.Space == NSXEnc && e.Local == "EncryptionMethod":
			m.encMethods = append(m.encMethods, i)
		}
	}
	if m.signedInfo < 0 || m.sigValue < 0 || len(m.refs) == 0 {
		return nil, ErrNotSecured
	}
	m.bodyID = m.attr(m.body, NSWSU, "Id")
	if m.timestamp >= 0 {
		m.tsID = m.attr(m.timestamp, NSWSU, "Id")
	}
	return m, nil
}

// inside reports whether element i is in the subtree of element anc.
func inside(d *xmlscan.Document, i, anc int) bool {
	return anc >= 0 && i > anc && i < d.Elements[anc].Next
}

func (m *msg) el(i int) *xmlscan.Element { return &m.doc.Elements[i] }

// attr returns the normalized value of i's attribute {space}local, or "".
func (m *msg) attr(i int, space, local string) string {
	j := m.doc.FindAttr(i, space, local)
	if j < 0 {
		return ""
	}
	return string(m.doc.AttrValue(j, nil))
}

func (m *msg) qname(i int) string {
	e := m.el(i)
	if e.Prefix == "" {
		return e.Local
	}
	return e.Prefix + ":" + e.Local
}

func (m *msg) bytesOf(i int) string { e := m.el(i); return string(m.data[e.Start:e.End]) }
func (m *msg) text(i int) string    { return string(m.doc.Text(i, nil)) }

// refURI returns the URI of Reference r.
func (m *msg) refURI(r int) string { return m.attr(r, "", "URI") }

// refTo returns the Reference whose URI is "#"+id, or -1.
func (m *msg) refTo(id string) int {
	if id == "" {
		return -1
	}
	for _, r := range m.refs {
		if m.refURI(r) == "#"+id {
			return r
		}
	}
	return -1
}

// edit replaces data[at:end] by s.
type edit struct {
	at, end int
	s       string
}

// apply returns a copy of the input with the edits applied. Edits must not
// overlap; insertions at the same offset are applied in argument order.
func (m *msg) apply(edits ...edit) []byte {
	idx := make([]int, len(edits))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return edits[idx[a]].at < edits[idx[b]].at })
	var out bytes.Buffer
	out.Grow(len(m.data) + 64)
	pos := 0
	for _, k := range idx {
		e := edits[k]
		if e.at < pos {
			panic(fmt.Sprintf("attack: overlapping edits at %d", e.at))
		}
		out.Write(m.data[pos:e.at])
		out.WriteString(e.s)
		pos = e.end
	}
	out.Write(m.data[pos:])
	return out.Bytes()
}

// Edit constructors.

func (m *msg) remove(i int) edit { e := m.el(i); return edit{e.Start, e.End, ""} }
func (m *msg) replace(i int, s string) edit {
	e := m.el(i)
	return edit{e.Start, e.End, s}
}
func (m *msg) before(i int, s string) edit { e := m.el(i); return edit{e.Start, e.Start, s} }
func (m *msg) after(i int, s string) edit  { e := m.el(i); return edit{e.End, e.End, s} }

// prepend inserts s as the first content of element i (not empty).
func (m *msg) prepend(i int, s string) edit {
	e := m.el(i)
	if e.Flags&xmlscan.FlagEmpty != 0 {
		return edit{e.StartEnd - 2, e.StartEnd, ">" + s + "</" + m.qname(i) + ">"}
	}
	return edit{e.StartEnd, e.StartEnd, s}
}

// appendChild inserts s as the last content of element i.
func (m *msg) appendChild(i int, s string) edit {
	e := m.el(i)
	if e.Flags&xmlscan.FlagEmpty != 0 {
		return m.prepend(i, s)
	}
	return edit{e.EndStart, e.EndStart, s}
}

// setContent replaces the content of element i.
func (m *msg) setContent(i int, s string) edit {
	e := m.el(i)
	if e.Flags&xmlscan.FlagEmpty != 0 {
		return m.prepend(i, s)
	}
	return edit{e.StartEnd, e.EndStart, s}
}

// addAttrs inserts s (e.g. `a="1"`) into the start tag of element i.
func (m *msg) addAttrs(i int, s string) edit {
	e := m.el(i)
	at := e.StartEnd - 1
	if e.Flags&xmlscan.FlagEmpty != 0 {
		at--
	}
	return edit{at, at, " " + s}
}

// setAttr replaces the raw value of i's attribute {space}local; ok is false
// when there is no such attribute.
func (m *msg) setAttr(i int, space, local, v string) (edit, bool) {
	j := m.doc.FindAttr(i, space, local)
	if j < 0 {
		return edit{}, false
	}
	a := m.doc.Attrs[j]
	return edit{a.Value.Start, a.Value.End, v}, true
}

// attrSpan returns the span of i's attribute {space}local from the white
// space before its name to the closing quote.
func (m *msg) attrSpan(i int, space, local string) (xmlscan.Attr, edit, bool) {
	j := m.doc.FindAttr(i, space, local)
	if j < 0 {
		return xmlscan.Attr{}, edit{}, false
	}
	a := m.doc.Attrs[j]
	return a, edit{a.Name.Start - 1, a.Value.End + 1, ""}, true
}

// nsDecl returns the edit replacing the value of the declaration of
// prefix on element i.
func (m *msg) nsDecl(i int, prefix string) (edit, bool) {
	for _, n := range m.doc.NSDeclsOf(i) {
		if n.Prefix == prefix {
			return edit{n.Value.Start, n.Value.End, ""}, true
		}
	}
	return edit{}, false
}

// startTagWith returns the start tag of element i transformed by the edits
// (whose offsets are absolute and must lie inside the start tag).
func (m *msg) startTagWith(i int, edits ...edit) string {
	e := m.el(i)
	var b strings.Builder
	pos := e.Start
	sort.SliceStable(edits, func(a, c int) bool { return edits[a].at < edits[c].at })
	for _, x := range edits {
		b.Write(m.data[pos:x.at])
		b.WriteString(x.s)
		pos = x.end
	}
	b.Write(m.data[pos:e.StartEnd])
	return b.String()
}

// elementWith returns the bytes of element i with edits applied inside it.
func (m *msg) elementWith(i int, edits ...edit) string {
	e := m.el(i)
	var b strings.Builder
	pos := e.Start
	sort.SliceStable(edits, func(a, c int) bool { return edits[a].at < edits[c].at })
	for _, x := range edits {
		b.Write(m.data[pos:x.at])
		b.WriteString(x.s)
		pos = x.end
	}
	b.Write(m.data[pos:e.End])
	return b.String()
}

// endTag returns the end tag of element i ("" for an empty element).
func (m *msg) endTag(i int) string {
	e := m.el(i)
	return string(m.data[e.EndStart:e.End])
}

// wrapper returns s wrapped in an attacker element.
func wrapper(s string) string {
	return `<atk:Wrapper xmlns:atk="` + NSAttack + `">` + s + `</atk:Wrapper>`
}

// attackerPayload is the content of an attacker Body.
const attackerPayload = `<atk:transferFunds xmlns:atk="` + NSAttack + `"><atk:to>attacker</atk:to><atk:amount>1000000</atk:amount></atk:transferFunds>`

// declEnd is where content may be inserted before the root: after the XML
// declaration (and BOM) if any.
func (m *msg) declEnd() int {
	if m.doc.Decl.Len() > 0 {
		return m.doc.Decl.End
	}
	if m.doc.BOM {
		return 3
	}
	return 0
}
