package template

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/wssgw/wssgw/internal/c14n"
	"github.com/wssgw/wssgw/internal/soap"
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

const (
	nsWSSE = xmlscan.NamespaceWSSE
	nsWSU  = xmlscan.NamespaceWSU
	nsDS   = xmlscan.NamespaceDSig
	nsExc  = c14n.AlgExcC14N
	nsXEnc = xmlscan.NamespaceXEnc
	nsXOP  = xmlscan.NamespaceXOP

	vtX509v3 = xmlscan.ValueTypeX509v3
	trSTR    = xmlscan.TransformSTR
	pwDigest = xmlscan.PasswordDigest

	// marker replaces slot values in the copy that is canonicalized to
	// learn the C14N templates: plain ASCII, unchanged by any c14n.
	marker    = "wSsGw"
	markerLen = len(marker) + 7 // wSsGw + 6 digits + 'Z'
)

// errUnsupported is a shape the template path does not handle: the DOM
// engine keeps it.
var errUnsupported = errors.New("template: unsupported shape")

func unsupported(format string, a ...any) error {
	return fmt.Errorf("%w: %s", errUnsupported, fmt.Sprintf(format, a...))
}

// secretSlots are the Security header elements whose content varies per
// message, with their class. All other content of the header is constant.
var secretSlots = map[[2]string]class{
	{nsDS, "DigestValue"}:                  classBase64,
	{nsDS, "SignatureValue"}:               classBase64,
	{nsWSSE, "BinarySecurityToken"}:        classBase64,
	{nsWSSE, "Nonce"}:                      classBase64,
	{nsWSU, "Created"}:                     classDateTime,
	{nsWSU, "Expires"}:                     classDateTime,
	{nsWSSE, "Username"}:                   classText,
	{nsWSSE, "Password"}:                   classText,
	{xmlscan.NamespaceXEnc, "CipherValue"}: classBase64,
}

type slotAt struct {
	start, end int
	elem       int // the element the slot belongs to
	slot
}

// learner turns one accepted message and the DOM engine's facts into a
// Template.
type learner struct {
	data  []byte
	d     *xmlscan.Document
	md    *xmlscan.Document // the marked copy
	res   *wss.Result
	p     *wss.Policy
	sec   int
	slots []slotAt
	t     *Template
	// constBuf holds all constant bytes, so canonical literals can share it.
	constBuf []byte
	extra    []byte // canonical literals not found in constBuf
	// phase splits the work of an encrypted message (decrypt.go): the
	// outer template does the Security header's children up to the
	// EncryptedKey on the received bytes, the inner one the rest on the
	// plaintext message.
	phase phase
	ek    int     // the EncryptedKey child of the Security header (outer, inner)
	enc   *splice // where the plaintext went (outer fills it, inner reads it)
	// pkg: data is the root part of an MTOM package; its xop:Include
	// hrefs are slots and every canonical form is the XOP infoset's.
	// bodyXOP counts the xop:Includes of a generic Body.
	pkg     bool
	atts    wss.Attachments // the package's parts, when pkg
	bodyXOP int
	body    int // the Body element when its content is generic (generic.go), else -1
	plain   plainKind
}

// learn builds the template of data, which the DOM engine accepted with
// facts res under policy p; when atts is not nil, data is the root part of
// an MTOM package whose other parts are atts (xop.go, xop_enc.go).
func learn(sc *xmlscan.Scanner, data []byte, atts wss.Attachments, res *wss.Result, p *wss.Policy) (*Template, error) {
	if atts != nil {
		if err := learnablePackage(res); err != nil {
			return nil, err
		}
	}
	if len(res.Decrypted) > 0 {
		return learnEncrypted(sc, data, atts, res, p)
	}
	return learnPhase(sc, data, res, p, phaseAll, nil, atts)
}

// learnPhase learns data as a whole message (phaseAll) or as one side of
// an encrypted one, whose splice enc describes; atts are the parts of the
// package whose root data is, or nil.
func learnPhase(sc *xmlscan.Scanner, data []byte, res *wss.Result, p *wss.Policy, ph phase, enc *splice, atts wss.Attachments) (*Template, error) {
	for _, s := range res.Signatures {
		if s.Signer == nil {
			return nil, unsupported("HMAC signature")
		}
	}
	if bytes.Contains(data, []byte(marker)) {
		return nil, unsupported("marker in message")
	}
	l := &learner{data: data, d: new(xmlscan.Document), md: new(xmlscan.Document), res: res, p: p, sec: -1, phase: ph, ek: -1, enc: enc, body: -1, pkg: atts != nil, atts: atts}
	if err := sc.Scan(data, l.d); err != nil {
		return nil, fmt.Errorf("template: %w", err)
	}
	if len(l.d.Misc) > 0 {
		return nil, unsupported("comments or CDATA")
	}
	for i := range l.d.Elements {
		if l.d.Elements[i].Start == res.Security[0] {
			l.sec = i
		}
	}
	if ph != phaseAll {
		if err := l.findEncryptedKey(); err != nil {
			return nil, err
		}
	}
	l.generalize()
	if err := l.collect(); err != nil {
		return nil, err
	}
	if err := l.fragments(); err != nil {
		return nil, err
	}
	if err := l.genericBody(); err != nil {
		return nil, err
	}
	if err := l.mark(sc); err != nil {
		return nil, err
	}
	if err := l.bind(); err != nil {
		return nil, err
	}
	if err := l.includes(); err != nil {
		return nil, err
	}
	if err := l.program(); err != nil {
		return nil, err
	}
	if err := l.packageFacts(); err != nil {
		return nil, err
	}
	if ph == phaseInner {
		l.t.plain = &plainAt{span: [2]anchor{l.anchor(enc.a), l.anchor(enc.a + enc.n)}, holder: l.anchor(res.Decrypted[0].Start)}
	}
	l.finish()
	l.fastPath(sc.Limits()) // on the finished literals
	l.midstates()
	return l.t, nil
}

func (l *learner) inSec(i int) bool {
	return l.sec >= 0 && i >= l.sec && i < l.d.Elements[l.sec].Next
}

func isSOAP(space string) bool { return space == soap.NS11 || space == soap.NS12 }

// securityNS: the XML Signature, XML Encryption and WS-Security
// namespaces, whose markup is constant in a template wherever it occurs.
func securityNS(space string) bool { return xmlscan.Base64Content(space) || space == nsWSU }

// isReference: a ds/wsse Reference or an xenc DataReference, whose URI
// names an id of the message.
func isReference(e *xmlscan.Element) bool {
	return (e.Local == "Reference" && (e.Space == nsDS || e.Space == nsWSSE)) || (e.Local == "DataReference" && e.Space == nsXEnc)
}

// contentLimit is the gate limit on an element's character data.
func contentLimit(space string) uint8 {
	if xmlscan.Base64Content(space) {
		return limitBase64
	}
	return limitText
}

// collect decides which attribute values and texts are slots.
func (l *learner) collect() error {
	d := l.d
	for i := range d.Elements {
		if l.inBody(i) {
			continue // the body slot holds it
		}
		e := &d.Elements[i]
		sec := l.inSec(i)
		for j := e.Attrs.Start; j < e.Attrs.End; j++ {
			a := &d.Attrs[j]
			c := class(0)
			switch {
			case wss.IsIDAttr(a):
				c = classID
			case l.pkg && e.Space == nsXOP && a.Space == "" && a.Local == "href":
				// The Content-IDs of the parts vary per message, in
				// the header (storeBytesInAttachment) as in the Body.
				c = classCID
			case l.pkg && e.Space == nsDS && e.Local == "Reference" && a.Space == "" && a.Local == "URI" && isCIDURL(d.AttrValue(j, nil)):
				c = classSwA
			case a.Space == "" && a.Local == "URI" && isReference(e):
				c = classRef
			case sec || isSOAP(e.Space) || isSOAP(a.Space) || securityNS(e.Space):
				// Security markup is constant wherever it is: an
				// EncryptedData's Type and algorithms are decisions.
			default:
				c = classAttr
			}
			if c != 0 {
				l.slots = append(l.slots, slotAt{start: a.Value.Start, end: a.Value.End, elem: i,
					slot: slot{class: c, term: a.Quote, limit: limitAttr}})
			}
		}
		if i == l.body {
			l.bodySlot()
			continue
		}
		if err := l.text(i, sec); err != nil {
			return err
		}
	}
	slices.SortFunc(l.slots, func(a, b slotAt) int { return a.start - b.start })
	return nil
}

// text makes a leaf element's content a slot; mixed content is not
// learned.
func (l *learner) text(i int, sec bool) error {
	d := l.d
	e := &d.Elements[i]
	if e.Flags&xmlscan.FlagEmpty != 0 {
		return nil
	}
	if e.Next != i+1 {
		if !sec && !isSOAP(e.Space) && l.mixed(i) {
			return unsupported("mixed content in %s", e.Local)
		}
		return nil
	}
	content := l.data[e.StartEnd:e.EndStart]
	if len(content) == 0 || xmlscan.AllSpace(content) {
		return nil
	}
	c := classText
	if !sec && securityNS(e.Space) {
		if e.Space != nsXEnc || e.Local != "CipherValue" {
			return nil // constant, like the markup around it
		}
		c = classBase64
	} else if sec {
		var ok bool
		if c, ok = secretSlots[[2]string{e.Space, e.Local}]; !ok {
			return nil
		}
	}
	l.slots = append(l.slots, slotAt{start: e.StartEnd, end: e.EndStart, elem: i,
		slot: slot{class: c, term: '<', limit: contentLimit(e.Space)}})
	return nil
}

// mixed reports whether element i has non-space text beside its children.
func (l *learner) mixed(i int) bool {
	d := l.d
	e := &d.Elements[i]
	pos := e.StartEnd
	for c := d.FirstChild(i); c >= 0; c = d.NextSibling(c) {
		if !xmlscan.AllSpace(l.data[pos:d.Elements[c].Start]) {
			return true
		}
		pos = d.Elements[c].End
	}
	return !xmlscan.AllSpace(l.data[pos:e.EndStart])
}

// fragments cuts the constant bytes between the slots, keeping each
// distinct fragment once: a payload repeats its items' markup.
func (l *learner) fragments() error {
	if len(l.slots) >= noSlot {
		return unsupported("%d slots", len(l.slots))
	}
	t := &Template{slots: make([]slot, 0, len(l.slots)), frags: make([]uint16, 0, len(l.slots)+1)}
	var buf []byte
	seen := map[string]uint16{}
	add := func(f []byte) {
		u, ok := seen[string(f)]
		if !ok {
			u = uint16(len(t.ends))
			seen[string(f)] = u
			buf = append(buf, f...)
			t.ends = append(t.ends, uint32(len(buf)))
		}
		t.frags = append(t.frags, u)
	}
	pos := 0
	for _, s := range l.slots {
		add(l.data[pos:s.start])
		pos = s.end
		t.slots = append(t.slots, s.slot)
	}
	add(l.data[pos:])
	t.ends = slices.Clone(t.ends)
	buf = slices.Clone(buf) // exactly its size: it is kept
	t.lits.c.own = buf
	l.constBuf = buf
	t.pkg = l.pkg
	l.t = t
	return nil
}

func markerOf(k int) string { return fmt.Sprintf("%s%06dZ", marker, k) }

// mark gates a copy with every slot replaced by a marker: canonicalizing
// it gives the canonical forms with the slots' places marked.
func (l *learner) mark(sc *xmlscan.Scanner) error {
	var b []byte
	for k := range l.t.nfrags() {
		b = append(b, l.t.frag(k)...)
		if k < len(l.slots) {
			b = append(b, markerOf(k)...)
		}
	}
	if err := sc.Scan(b, l.md); err != nil {
		return unsupported("marked copy: %v", err)
	}
	want := len(l.d.Elements)
	if l.body >= 0 {
		// The body content is one marker: its elements are the last ones.
		want -= l.d.Elements[l.body].Next - l.body - 1
	}
	if len(l.md.Elements) != want {
		return unsupported("marked copy differs")
	}
	return nil
}

// slotAtOffset returns the slot starting at offset start, or -1.
func (l *learner) slotAtOffset(start int) int {
	k, ok := slices.BinarySearchFunc(l.slots, start, func(s slotAt, v int) int { return s.start - v })
	if !ok {
		return -1
	}
	return k
}

func (l *learner) value(k int) []byte { return l.data[l.slots[k].start:l.slots[k].end] }

// bind records the binding constraints: every Reference URI slot names an
// id slot, and all id slots are distinct.
func (l *learner) bind() error {
	ids := map[string]int{}
	for k, s := range l.slots {
		if s.class == classID {
			l.t.ids = append(l.t.ids, k)
			ids[string(l.value(k))] = k
		}
	}
	for k, s := range l.slots {
		if s.class != classRef || (l.phase == phaseInner && l.d.Elements[s.elem].Local == "DataReference") {
			// In the plaintext message a DataReference names the
			// EncryptedData that is gone: the outer template bound it.
			continue
		}
		id, ok := ids[string(l.value(k)[1:])]
		if !ok {
			return unsupported("reference %s to no id", l.value(k))
		}
		l.t.bindings = append(l.t.bindings, binding{ref: k, id: id})
	}
	return nil
}

// target returns the element a Reference URI slot points to.
func (l *learner) target(refSlot int) int {
	for _, b := range l.t.bindings {
		if b.ref == refSlot {
			return l.slots[b.id].elem
		}
	}
	return -1
}

// textSlot returns the slot holding element i's content, or -1.
func (l *learner) textSlot(i int) int {
	k := l.slotAtOffset(l.d.Elements[i].StartEnd)
	if k >= 0 && l.slots[k].elem == i && l.slots[k].class.textual() {
		return k
	}
	return -1
}

// attrSlot returns the slot of element i's unqualified attribute local.
func (l *learner) attrSlot(i int, local string) int {
	j := l.d.FindAttr(i, "", local)
	if j < 0 {
		return -1
	}
	return l.slotAtOffset(l.d.Attrs[j].Value.Start)
}

// anchor locates offset o of the learned message.
func (l *learner) anchor(o int) anchor {
	start := 0
	for k := range l.t.nfrags() {
		if f := l.t.frag(k); o >= start && o <= start+len(f) {
			return anchor{frag: k, delta: o - start}
		}
		if k < len(l.slots) {
			start = l.slots[k].end
		}
	}
	return anchor{frag: -1}
}

// canon learns the canonical form of element i under alg as pieces.
func (l *learner) canon(i int, alg string, prefixes []string) ([]piece, error) {
	out, err := l.canonical(i, alg, prefixes)
	if err != nil {
		return nil, unsupported("c14n: %v", err)
	}
	var ps []piece
	for len(out) > 0 {
		at := bytes.Index(out, []byte(marker))
		if at < 0 {
			ps = l.share(ps, out)
			break
		}
		if at > 0 {
			ps = l.share(ps, out[:at])
		}
		if len(out) < at+markerLen || out[at+markerLen-1] != 'Z' {
			return nil, unsupported("marker mangled by c14n")
		}
		k, err := strconv.Atoi(string(out[at+len(marker) : at+markerLen-1]))
		if err != nil || k >= len(l.slots) {
			return nil, unsupported("marker mangled by c14n")
		}
		if n := len(ps); n > 0 && ps[n-1].slot == noSlot {
			ps[n-1].slot = uint16(k) // the literal before it
		} else {
			ps = append(ps, piece{slot: uint16(k)})
		}
		out = out[at+markerLen:]
	}
	return slices.Clone(ps), nil // exactly its size: it is kept
}

// share appends b as literal pieces: where it occurs in the constant
// bytes, so most canonical literals cost no memory of their own, else in
// the extra literals.
func (l *learner) share(ps []piece, b []byte) []piece {
	for len(b) > maxPieceLit {
		ps = l.share(ps, b[:maxPieceLit])
		b = b[maxPieceLit:]
	}
	if at := bytes.Index(l.constBuf, b); at >= 0 {
		return append(ps, piece{off: uint32(at), n: uint16(len(b)), slot: noSlot})
	}
	if at := bytes.Index(l.extra, b); at >= 0 {
		return append(ps, piece{off: xBit | uint32(at), n: uint16(len(b)), slot: noSlot})
	}
	l.extra = append(l.extra, b...)
	return append(ps, piece{off: xBit | uint32(len(l.extra)-len(b)), n: uint16(len(b)), slot: noSlot})
}

// literals keeps the extra literals after the fragments.
func (l *learner) literals() {
	t := l.t
	t.lits.c.own = l.constBuf // exactly its size (fragments)
	t.lits.x.own = slices.Clone(l.extra)
}

// finish fills in the identity, size and exemplar.
func (l *learner) finish() {
	t := l.t
	h := sha256.New()
	for k := range t.nfrags() {
		f := t.frag(k)
		fmt.Fprintf(h, "%d:", len(f))
		h.Write(f)
		if k < len(t.slots) {
			fmt.Fprintf(h, "|%d/%d|", t.slots[k].class, t.slots[k].limit)
		}
	}
	if t.pkg {
		h.Write([]byte("|package"))
	}
	t.ID = hex.EncodeToString(h.Sum(nil)[:8])
	t.exemplarValues = l.values()
	l.literals()
	t.size = t.estimate(0)
}

// values are the learned slot values, length-prefixed: with the fragments
// they rebuild the message, which is what export writes.
func (l *learner) values() []byte {
	var b []byte
	for k := range l.slots {
		v := l.value(k)
		b = strconv.AppendInt(b, int64(len(v)), 10)
		b = append(b, ':')
		b = append(b, v...)
	}
	return b
}
