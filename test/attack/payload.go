package attack

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
)

// FamilyPayload is the family of Payload's mutants; it is not one of
// Families() because some of them must be accepted.
const FamilyPayload = "payload"

// PayloadMutant is a message whose Body was changed after signing.
type PayloadMutant struct {
	Mutant
	// Accept is true when the change keeps the Body's exclusive canonical
	// form (a character written as a reference, other quotes, a
	// redundant or unused namespace declaration, a declaration moved to
	// an ancestor): a correct verifier accepts the message. Every other
	// mutant changes the signed content, or puts a comment, CDATA, a
	// duplicate id or a security element where the gate or the id rules
	// refuse it: a correct verifier rejects it.
	Accept bool
}

// Payload returns the mutants of msg's Body that attack a template
// automaton generalized over payloads (issue 14): an extra repeated
// element, a missing one, a value crossing a loop or element boundary,
// attributes and namespace prefixes changed, ids and security elements
// injected, comments and CDATA, and the ways of writing the same
// characters that exclusive C14N does and does not tell apart. msg is a
// signed message as Mutate takes it, with a plaintext payload element in
// its Body; mutants whose site the payload lacks (no list of two items,
// no attribute, no newline) are left out.
func Payload(msg []byte) ([]PayloadMutant, error) {
	m, err := parse(msg)
	if err != nil {
		return nil, err
	}
	p := &payload{m: m, root: m.doc.FirstChild(m.body), seen: map[string]bool{}}
	if p.root < 0 || m.el(p.root).Space == NSXEnc {
		return nil, fmt.Errorf("attack: no plaintext payload in the Body: %w", ErrNotSecured)
	}
	p.findSites()
	p.loop()
	p.values()
	p.attributes()
	p.namespaces()
	p.context()
	p.injected()
	p.characters()
	if p.err != nil {
		return nil, p.err
	}
	return p.out, nil
}

// payload collects Payload's mutants and the sites they edit.
type payload struct {
	m     *msg
	root  int   // the payload element
	items []int // the longest run of adjacent same-named siblings
	leafs []int // elements in the Body with text and no child element
	out   []PayloadMutant
	seen  map[string]bool
	err   error
}

func (p *payload) add(accept bool, name string, data []byte) {
	if p.err != nil {
		return
	}
	name = "payload/" + name
	if p.seen[name] {
		p.err = fmt.Errorf("attack: duplicate payload mutant %q", name)
		return
	}
	p.seen[name] = true
	if bytes.Equal(data, p.m.data) {
		return // the site's edit changes nothing here (two equal items swapped)
	}
	p.out = append(p.out, PayloadMutant{Mutant: Mutant{Name: name, Family: FamilyPayload, Data: data}, Accept: accept})
}

func (p *payload) findSites() {
	m, d := p.m, p.m.doc
	for i := p.root; i < m.el(m.body).Next; i++ {
		run := []int{i}
		for s := d.NextSibling(i); s >= 0 && d.Elements[s].Space == d.Elements[i].Space && d.Elements[s].Local == d.Elements[i].Local; s = d.NextSibling(s) {
			run = append(run, s)
		}
		if len(run) > len(p.items) && len(run) >= 2 {
			p.items = run // a run's middle gives a shorter run: the longest is whole
		}
		e := m.el(i)
		if e.Next == i+1 && e.EndStart > e.StartEnd && !bytes.ContainsAny(m.data[e.StartEnd:e.EndStart], "<") {
			p.leafs = append(p.leafs, i)
		}
	}
}

// leafIn returns the first (last when last) leaf in the subtree of i, or -1.
func (p *payload) leafIn(i int, last bool) int {
	found := -1
	for _, l := range p.leafs {
		if l >= i && l < p.m.el(i).Next {
			if !last {
				return l
			}
			found = l
		}
	}
	return found
}

// content is the span of element i's content.
func (p *payload) content(i int) (int, int) { e := p.m.el(i); return e.StartEnd, e.EndStart }

// unitAt returns the length of the character or reference starting at
// data[at].
func (p *payload) unitAt(at int) int {
	if p.m.data[at] == '&' {
		return bytes.IndexByte(p.m.data[at:], ';') + 1
	}
	_, n := utf8.DecodeRune(p.m.data[at:])
	return n
}

// lastUnit returns the start of the last character or reference of data[from:to].
func (p *payload) lastUnit(from, to int) int {
	if p.m.data[to-1] == ';' {
		if a := bytes.LastIndexByte(p.m.data[from:to], '&'); a >= 0 {
			return from + a
		}
	}
	_, n := utf8.DecodeLastRune(p.m.data[from:to])
	return to - n
}

// loop attacks the repeated element: one more, one fewer, two swapped, a
// value moved from one item into the next.
func (p *payload) loop() {
	if len(p.items) < 2 {
		return
	}
	m := p.m
	first, second, last := p.items[0], p.items[1], p.items[len(p.items)-1]
	p.add(false, "loop/extra-last", m.apply(m.after(last, m.bytesOf(last))))
	p.add(false, "loop/extra-first", m.apply(m.before(first, m.bytesOf(first))))
	p.add(false, "loop/extra-copy-between", m.apply(m.after(first, m.bytesOf(second))))
	p.add(false, "loop/missing-last", m.apply(m.remove(last)))
	p.add(false, "loop/missing-first", m.apply(m.remove(first)))
	all := edit{m.el(first).Start, m.el(last).End, ""}
	p.add(false, "loop/missing-all", m.apply(all))
	p.add(false, "loop/swapped", m.apply(m.replace(first, m.bytesOf(second)), m.replace(second, m.bytesOf(first))))
	// The last character of the first item's last value becomes the first
	// of the second item's first value: the same text in the same order,
	// split at another loop boundary.
	a, b := p.leafIn(first, true), p.leafIn(second, false)
	if a >= 0 && b >= 0 {
		from, to := p.content(a)
		u := p.lastUnit(from, to)
		bs, _ := p.content(b)
		p.add(false, "loop/value-crosses-boundary", m.apply(edit{u, to, ""}, edit{bs, bs, string(m.data[u:to])}))
		p.add(false, "loop/value-moved-to-next-item", m.apply(edit{from, to, ""}, edit{bs, bs, string(m.data[from:to])}))
	}
}

// values attacks the elements around the loop: text crossing an element
// boundary, an optional element missing or twice.
func (p *payload) values() {
	m := p.m
	for _, l := range p.leafs {
		n := m.doc.NextSibling(l)
		if n < 0 || !p.isLeaf(n) {
			continue
		}
		from, to := p.content(l)
		ns, _ := p.content(n)
		u := p.unitAt(ns)
		p.add(false, "value/text-crosses-element-boundary", m.apply(edit{to, to, string(m.data[ns : ns+u])}, edit{ns, ns + u, ""}))
		p.add(false, "value/texts-swapped", m.apply(edit{from, to, string(m.data[ns:m.el(n).EndStart])}, edit{ns, m.el(n).EndStart, string(m.data[from:to])}))
		break
	}
	if len(p.leafs) > 0 {
		l := p.leafs[0]
		p.add(false, "value/element-missing", m.apply(m.remove(l)))
		p.add(false, "value/element-twice", m.apply(m.after(l, m.bytesOf(l))))
		from, to := p.content(l)
		p.add(false, "value/text-emptied", m.apply(edit{from, to, ""}))
		p.add(false, "value/text-appended", m.apply(edit{to, to, "0"}))
	}
}

func (p *payload) isLeaf(i int) bool {
	for _, l := range p.leafs {
		if l == i {
			return true
		}
	}
	return false
}

// firstAttr returns the first element in the payload with an attribute
// (not a namespace declaration), and that attribute's index, or -1, -1.
func (p *payload) firstAttr(min int) (int, int) {
	m := p.m
	for i := p.root; i < m.el(m.body).Next; i++ {
		if a := m.el(i).Attrs; a.Len() >= min {
			return i, a.Start
		}
	}
	return -1, -1
}

// attributes attacks attributes: one added, removed or changed, and the
// forms exclusive C14N does not see (quotes, order, spaces, references)
// or does (a raw tab normalized to a space vs a tab reference kept).
func (p *payload) attributes() {
	m := p.m
	p.add(false, "attr/added-on-payload", m.apply(m.addAttrs(p.root, `extra="1"`)))
	if len(p.items) > 0 {
		p.add(false, "attr/added-on-item", m.apply(m.addAttrs(p.items[0], `extra="1"`)))
	}
	i, j := p.firstAttr(1)
	if i < 0 {
		return
	}
	a := m.doc.Attrs[j]
	p.add(false, "attr/removed", m.apply(edit{a.Name.Start - 1, a.Value.End + 1, ""}))
	p.add(false, "attr/value-changed", m.apply(edit{a.Value.End, a.Value.End, "0"}))
	p.add(true, "attr/spaces-around-equals", m.apply(edit{a.Name.End, a.Value.Start - 1, " = "}))
	other := byte('\'')
	if a.Quote == '\'' {
		other = '"'
	}
	if !bytes.ContainsRune(m.data[a.Value.Start:a.Value.End], rune(other)) {
		q := string(other)
		p.add(true, "attr/quotes-swapped", m.apply(edit{a.Value.Start - 1, a.Value.Start, q}, edit{a.Value.End, a.Value.End + 1, q}))
	}
	if a.Value.Len() > 0 && m.data[a.Value.Start] > ' ' && m.data[a.Value.Start] < utf8.RuneSelf && m.data[a.Value.Start] != '&' {
		c := m.data[a.Value.Start]
		p.add(true, "attr/char-as-reference", m.apply(edit{a.Value.Start, a.Value.Start + 1, fmt.Sprintf("&#%d;", c)}))
	}
	if i, j := p.firstAttr(2); i >= 0 {
		x, y := m.doc.Attrs[j], m.doc.Attrs[j+1]
		xs, ys := string(m.data[x.Name.Start:x.Value.End+1]), string(m.data[y.Name.Start:y.Value.End+1])
		p.add(true, "attr/order-swapped", m.apply(edit{x.Name.Start, x.Value.End + 1, ys}, edit{y.Name.Start, y.Value.End + 1, xs}))
	}
	// Attribute-value normalization (XML 1.0 §3.3.3): a raw tab is a
	// space, a tab reference stays a tab.
	for k := range m.doc.Attrs {
		v := m.doc.Attrs[k].Value
		if v.Start < m.el(p.root).Start || v.End > m.el(m.body).EndStart {
			continue
		}
		if t := bytes.IndexByte(m.data[v.Start:v.End], '\t'); t >= 0 {
			at := v.Start + t
			p.add(true, "attr/raw-tab-as-space", m.apply(edit{at, at + 1, " "}))
			p.add(false, "attr/raw-tab-as-reference", m.apply(edit{at, at + 1, "&#9;"}))
			break
		}
	}
}

// namespaces attacks the payload's prefixes and default namespace.
func (p *payload) namespaces() {
	m, d := p.m, p.m.doc
	r := m.el(p.root)
	if r.Space == "" {
		return
	}
	// The payload element's prefix renamed, the new prefix bound to the
	// same URI: the same expanded name, another canonical form.
	rename := func(name, to string) {
		q := r.Start + 1
		e := []edit{{q, q + r.QNameLen(), to + ":" + r.Local + ` xmlns:` + to + `="` + r.Space + `"`},
			{r.EndStart + 2, r.EndStart + 2 + r.QNameLen(), to + ":" + r.Local}}
		p.add(false, name, m.apply(e...))
	}
	rename("ns/prefix-renamed-same-uri", "alt")
	if env := m.el(0).Prefix; env != "" && env != r.Prefix {
		rename("ns/prefix-renamed-to-envelope-prefix", env)
	}
	if r.Prefix == "" {
		p.add(false, "ns/default-namespace-changed", m.apply(m.rebind(p.root, "", "urn:wssgw:attack")))
		if c := d.FirstChild(p.root); c >= 0 && d.Elements[c].Prefix == "" && d.Elements[c].Space == r.Space {
			p.add(false, "ns/default-undeclared-on-child", m.apply(m.addAttrs(c, `xmlns=""`)))
		}
	} else if _, own := m.nsDecl(p.root, ""); !own && !p.usesDefault() {
		p.add(true, "ns/default-declared-unused", m.apply(m.addAttrs(p.root, `xmlns="urn:wssgw:attack"`)))
		p.add(true, "ns/default-undeclared-unused", m.apply(m.addAttrs(p.root, `xmlns=""`)))
	}
	p.add(true, "ns/unused-declaration", m.apply(m.addAttrs(p.root, `xmlns:atkunused="urn:wssgw:attack:unused"`)))
	if c := d.FirstChild(p.root); c >= 0 {
		ce := m.el(c)
		if uri, ok := d.LookupPrefix(c, ce.Prefix); ok && uri == ce.Space {
			decl := `xmlns="` + uri + `"`
			if ce.Prefix != "" {
				decl = `xmlns:` + ce.Prefix + `="` + uri + `"`
			}
			if _, own := m.nsDecl(c, ce.Prefix); !own {
				p.add(true, "ns/redundant-redeclaration", m.apply(m.addAttrs(c, decl)))
			}
		}
	}
	// A prefix only an attribute uses, declared on an ancestor: the same
	// binding again on the element (exclusive C14N renders it there
	// anyway), or another URI (the attribute's expanded name changes).
	for i := p.root; i < m.el(p.root).Next; i++ {
		done := false
		for _, a := range d.AttrsOf(i) {
			if a.Prefix == "" || a.Prefix == "xml" || a.Prefix == m.el(i).Prefix {
				continue
			}
			if _, own := m.nsDecl(i, a.Prefix); own {
				continue
			}
			p.add(true, "ns/attribute-prefix-redeclared", m.apply(m.addAttrs(i, `xmlns:`+a.Prefix+`="`+a.Space+`"`)))
			p.add(false, "ns/attribute-prefix-rebound", m.apply(m.addAttrs(i, `xmlns:`+a.Prefix+`="urn:wssgw:attack"`)))
			done = true
			break
		}
		if done {
			break
		}
	}
	// The payload's own declaration moved up to the Body or the Envelope,
	// where the prefix is free: exclusive C14N renders it where it is
	// used, so the Body's canonical form stays.
	for _, n := range d.NSDeclsOf(p.root) {
		if n.Prefix != r.Prefix {
			continue
		}
		if _, bound := d.LookupPrefix(m.body, n.Prefix); bound {
			break
		}
		decl := string(m.data[n.Name.Start : n.Value.End+1])
		drop := edit{n.Name.Start - 1, n.Value.End + 1, ""}
		p.add(true, "ns/declaration-moved-to-body", m.apply(drop, m.addAttrs(m.body, decl)))
		p.add(true, "ns/declaration-moved-to-envelope", m.apply(drop, m.addAttrs(0, decl)))
	}
}

// context changes what the Body inherits from the Envelope and its own
// start tag: declarations and xml:* attributes. Exclusive C14N renders an
// inherited declaration only when the Body's subtree uses its prefix or
// the Reference's InclusiveNamespaces PrefixList names it, and no
// inherited xml:* attribute (exc-c14n §3), so a Body digested without its
// context must take exactly these into account.
func (p *payload) context() {
	m, d := p.m, p.m.doc
	listed := p.prefixList()
	used := map[string]bool{}
	for i := m.body; i < m.el(m.body).Next; i++ {
		used[m.el(i).Prefix] = true
		for _, a := range d.AttrsOf(i) {
			used[a.Prefix] = true
		}
	}
	const other = "urn:wssgw:attack:context"
	p.add(true, "context/unused-declaration-on-body", m.apply(m.addAttrs(m.body, `xmlns:atkunused="`+other+`"`)))
	p.add(true, "context/unused-declaration-on-envelope", m.apply(m.addAttrs(0, `xmlns:atkunused="`+other+`"`)))
	p.add(true, "context/xml-lang-on-envelope", m.apply(m.addAttrs(0, `xml:lang="de"`)))
	p.add(false, "context/xml-lang-on-body", m.apply(m.addAttrs(m.body, `xml:lang="de"`)))
	p.add(false, "context/attribute-on-body", m.apply(m.addAttrs(m.body, `xmlns:atkattr="`+other+`" atkattr:role="admin"`)))
	for _, n := range d.NSDeclsOf(0) {
		if n.Prefix == "" || used[n.Prefix] {
			continue
		}
		if listed[n.Prefix] {
			p.add(false, "context/listed-prefix-rebound-on-body", m.apply(m.rebind(m.body, n.Prefix, other)))
		} else {
			p.add(true, "context/unlisted-prefix-rebound-on-body", m.apply(m.rebind(m.body, n.Prefix, other)))
		}
	}
	// A default namespace on the Body reaches the Body's canonical form
	// when the PrefixList names #default or an unprefixed element in the
	// Body inherits it.
	p.add(!listed["#default"] && !p.inheritsDefault(), "context/default-declared-on-body", m.apply(m.rebind(m.body, "", other)))
}

// prefixList is the set of prefixes in the InclusiveNamespaces PrefixList
// of the Reference to the Body.
func (p *payload) prefixList() map[string]bool {
	m := p.m
	out := map[string]bool{}
	r := m.refTo(m.bodyID)
	if r < 0 {
		return out
	}
	for i := r; i < m.el(r).Next; i++ {
		if m.el(i).Local == "InclusiveNamespaces" {
			for _, f := range strings.Fields(m.attr(i, "", "PrefixList")) {
				out[f] = true
			}
		}
	}
	return out
}

// inheritsDefault reports whether an unprefixed element in the Body has
// no default namespace declaration between it and the Body.
func (p *payload) inheritsDefault() bool {
	m := p.m
	for i := m.body + 1; i < m.el(m.body).Next; i++ {
		if m.el(i).Prefix != "" {
			continue
		}
		own := false
		for a := i; a != m.body && !own; a = m.el(a).Parent {
			_, own = m.nsDecl(a, "")
		}
		if !own {
			return true
		}
	}
	return false
}

// usesDefault reports whether an element of the payload is unprefixed.
func (p *payload) usesDefault() bool {
	for i := p.root; i < p.m.el(p.root).Next; i++ {
		if p.m.el(i).Prefix == "" {
			return true
		}
	}
	return false
}

// injected puts into the Body what a verifier must not take for its own:
// the Body's id (wrapping), encrypted data, an XOP include, a signature,
// security header content, comments and CDATA.
func (p *payload) injected() {
	m := p.m
	if m.bodyID != "" {
		idAttr := `xmlns:atkwsu="` + NSWSU + `" atkwsu:Id="` + m.bodyID + `"`
		p.add(false, "inject/body-id-on-payload", m.apply(m.addAttrs(p.root, idAttr)))
		b := m.el(m.body)
		orig := string(m.data[b.StartEnd:b.EndStart])
		p.add(false, "inject/body-id-on-wrapper", m.apply(edit{b.StartEnd, b.EndStart,
			`<atk:Wrapper xmlns:atk="` + NSAttack + `" ` + idAttr + `>` + orig + `</atk:Wrapper>` + attackerPayload}))
	}
	encData := `<xenc:EncryptedData xmlns:xenc="` + NSXEnc + `" Id="atk-ed" Type="http://www.w3.org/2001/04/xmlenc#Content"><xenc:EncryptionMethod Algorithm="http://www.w3.org/2009/xmlenc11#aes256-gcm"/><xenc:CipherData><xenc:CipherValue>AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA</xenc:CipherValue></xenc:CipherData></xenc:EncryptedData>`
	p.add(false, "inject/encrypted-data-in-payload", m.apply(m.appendChild(p.root, encData)))
	p.add(false, "inject/encrypted-data-first-in-body", m.apply(m.before(p.root, encData)))
	sig := `<ds:Signature xmlns:ds="` + NSDS + `"><ds:SignedInfo><ds:CanonicalizationMethod Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"/><ds:SignatureMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"/><ds:Reference URI="#` + m.bodyID + `"><ds:DigestMethod Algorithm="http://www.w3.org/2001/04/xmlenc#sha256"/><ds:DigestValue>AAAA</ds:DigestValue></ds:Reference></ds:SignedInfo><ds:SignatureValue>AAAA</ds:SignatureValue></ds:Signature>`
	p.add(false, "inject/signature-in-payload", m.apply(m.appendChild(p.root, sig)))
	p.add(false, "inject/security-in-payload", m.apply(m.appendChild(p.root, `<wsse:Security xmlns:wsse="`+NSWSSE+`"><wsse:UsernameToken><wsse:Username>admin</wsse:Username></wsse:UsernameToken></wsse:Security>`)))
	p.add(false, "inject/bst-in-payload", m.apply(m.appendChild(p.root, `<wsse:BinarySecurityToken xmlns:wsse="`+NSWSSE+`" xmlns:atkwsu="`+NSWSU+`" atkwsu:Id="atk-bst" ValueType="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-x509-token-profile-1.0#X509v3">AAAA</wsse:BinarySecurityToken>`)))
	if len(p.leafs) > 0 {
		from, to := p.content(p.leafs[0])
		p.add(false, "inject/xop-include-for-value", m.apply(edit{from, to, `<xop:Include xmlns:xop="http://www.w3.org/2004/08/xop/include" href="cid:atk@example"/>`}))
		u := from + p.unitAt(from)
		p.add(false, "inject/comment-in-value", m.apply(edit{u, u, "<!--atk-->"}))
		if raw := m.data[from:to]; !bytes.ContainsAny(raw, "&") && !bytes.Contains(raw, []byte("]]>")) {
			p.add(false, "inject/cdata-same-value", m.apply(edit{from, to, "<![CDATA[" + string(raw) + "]]>"}))
		}
		p.add(false, "inject/cdata-other-value", m.apply(edit{from, to, "<![CDATA[atk]]>"}))
	}
	if len(p.items) > 0 {
		p.add(false, "inject/comment-between-items", m.apply(m.after(p.items[0], "<!--atk-->")))
	}
	p.add(false, "inject/comment-in-body", m.apply(m.before(p.root, "<!--atk-->")))
}

// characters writes characters of the payload's text in other forms:
// the same characters (accepted) or others (rejected).
func (p *payload) characters() {
	m := p.m
	letter, amp, gt, nonASCII, lf := -1, -1, -1, -1, -1
	for _, l := range p.leafs {
		from, to := p.content(l)
		for at := from; at < to; {
			n := p.unitAt(at)
			c := m.data[at]
			switch {
			case letter < 0 && (c|0x20 >= 'a' && c|0x20 <= 'y'):
				letter = at
			case amp < 0 && bytes.HasPrefix(m.data[at:], []byte("&amp;")):
				amp = at
			case gt < 0 && bytes.HasPrefix(m.data[at:], []byte("&gt;")) && !bytes.HasSuffix(m.data[from:at], []byte("]]")):
				gt = at
			case nonASCII < 0 && c >= utf8.RuneSelf:
				nonASCII = at
			}
			at += n
		}
	}
	// A newline in character data (between payload elements, or in a
	// value): as CRLF and as a reference it is still a newline; as a CR
	// reference it is not.
	for _, seg := range p.textSegments() {
		for k := seg[0]; k < seg[1] && lf < 0; k++ {
			if m.data[k] == '\n' && m.data[k-1] != '\r' { // not the LF of a CRLF
				lf = k
			}
		}
	}
	if letter >= 0 {
		c := m.data[letter]
		p.add(true, "chars/letter-as-reference", m.apply(edit{letter, letter + 1, fmt.Sprintf("&#%d;", c)}))
		p.add(true, "chars/letter-as-hex-reference", m.apply(edit{letter, letter + 1, fmt.Sprintf("&#x%x;", c)}))
		p.add(false, "chars/reference-to-other-letter", m.apply(edit{letter, letter + 1, fmt.Sprintf("&#%d;", c+1)}))
	}
	if amp >= 0 {
		p.add(true, "chars/amp-as-reference", m.apply(edit{amp, amp + 5, "&#38;"}))
		p.add(false, "chars/amp-as-lt", m.apply(edit{amp, amp + 5, "&lt;"}))
	}
	if gt >= 0 {
		p.add(true, "chars/gt-raw", m.apply(edit{gt, gt + 4, ">"}))
	}
	if nonASCII >= 0 {
		r, n := utf8.DecodeRune(m.data[nonASCII:])
		p.add(true, "chars/non-ascii-as-reference", m.apply(edit{nonASCII, nonASCII + n, fmt.Sprintf("&#x%X;", r)}))
		p.add(false, "chars/non-ascii-as-other-reference", m.apply(edit{nonASCII, nonASCII + n, fmt.Sprintf("&#x%X;", r+1)}))
	}
	if lf >= 0 {
		p.add(true, "chars/lf-as-crlf", m.apply(edit{lf, lf + 1, "\r\n"}))
		p.add(true, "chars/lf-as-reference", m.apply(edit{lf, lf + 1, "&#10;"}))
		p.add(false, "chars/lf-as-cr-reference", m.apply(edit{lf, lf + 1, "&#xD;"}))
		p.add(false, "chars/lf-as-space", m.apply(edit{lf, lf + 1, " "}))
	}
	// A CR reference made raw: end-of-line handling turns it into a
	// newline, another character.
	if k := bytes.Index(m.data[m.el(p.root).Start:m.el(p.root).End], []byte("&#xD;")); k >= 0 {
		at := m.el(p.root).Start + k
		p.add(false, "chars/cr-reference-made-raw", m.apply(edit{at, at + 5, "\r"}))
	}
	if len(p.leafs) > 0 {
		l := m.el(p.leafs[0])
		p.add(true, "chars/end-tag-space", m.apply(edit{l.End - 1, l.End - 1, " "}))
		p.add(true, "chars/start-tag-space", m.apply(edit{l.StartEnd - 1, l.StartEnd - 1, "\n\t"}))
	}
	for i := p.root; i < m.el(p.root).Next; i++ {
		e := m.el(i)
		if e.Next != i+1 {
			continue
		}
		q := m.qname(i)
		switch {
		case e.EndStart == e.StartEnd && !strings.HasSuffix(string(m.data[e.Start:e.StartEnd]), "/>"):
			p.add(true, "chars/empty-element-short", m.apply(edit{e.StartEnd - 1, e.End, "/>"}))
		case strings.HasSuffix(string(m.data[e.Start:e.StartEnd]), "/>"):
			p.add(true, "chars/empty-element-long", m.apply(edit{e.StartEnd - 2, e.StartEnd, "></" + q + ">"}))
		default:
			continue
		}
		break
	}
}

// textSegments are the character data spans in the payload (between
// tags), in document order.
func (p *payload) textSegments() [][2]int {
	m := p.m
	var out [][2]int
	for i := p.root; i < m.el(p.root).Next; i++ {
		e := m.el(i)
		at := e.StartEnd
		for c := m.doc.FirstChild(i); c >= 0; c = m.doc.NextSibling(c) {
			out = append(out, [2]int{at, m.el(c).Start})
			at = m.el(c).End
		}
		if e.EndStart > at {
			out = append(out, [2]int{at, e.EndStart})
		}
	}
	return out
}
