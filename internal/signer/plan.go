package signer

import (
	"cmp"
	"slices"

	"github.com/wssgw/wssgw/internal/xmlscan"
)

// timeFormat is xsd:dateTime in UTC with milliseconds, as WSS4J writes
// wsu:Created/Expires (WSS 1.1 §10 recommends UTC).
const timeFormat = "2006-01-02T15:04:05.000Z"

// Slots of an edit whose bytes change between the passes of Secure.
const (
	slotNone     = iota
	slotSecurity // the wsse:Security header
	slotBody     // the Body content: plaintext, or EncryptedData at the end
)

// edit replaces input bytes [at, end) with pre, the slot's bytes, post.
type edit struct {
	at, end   int
	pre, post []byte
	slot      int
	orig      []byte // the slot's input bytes, kept when nothing replaces them
}

// newPlan assigns ids, picks prefixes and PrefixLists, and lists the edits
// that turn the input into the secured message.
func newPlan(r *resolved, env *envelope) (*plan, []edit, error) {
	d := env.d
	p := &plan{r: r, soapNS: env.soapNS, soap12: env.soap12}
	var err error
	id := func(dst *string, prefix string) {
		if err == nil {
			*dst, err = newID(r, prefix)
		}
	}
	if r.TTL >= 0 {
		id(&p.tsID, "TS-")
		now := r.Now().UTC()
		p.created, p.expires = now.Format(timeFormat), now.Add(r.TTL).Format(timeFormat)
	}
	if r.KeyReference == RefBST {
		id(&p.bstID, "X509-")
	}
	if r.EncryptFor != nil {
		if r.EncryptKeyReference == RefBST {
			id(&p.encBstID, "X509-")
		}
		id(&p.ekID, "EK-")
		id(&p.edID, "ED-")
	}
	if r.SignatureConfirmation {
		p.confIDs = make([]string, max(1, len(r.Confirm)))
		for i := range p.confIDs {
			id(&p.confIDs[i], "SC-")
		}
	}
	id(&p.sigID, "SIG-")
	id(&p.kiID, "KI-")
	id(&p.strID, "STR-")
	if err != nil {
		return nil, nil, err
	}
	if err := tokenRef(&p.sigToken, r.KeyReference, r.Certificate, p.bstID); err != nil {
		return nil, nil, err
	}
	if r.EncryptFor != nil {
		if err := tokenRef(&p.encToken, r.EncryptKeyReference, r.EncryptFor, p.encBstID); err != nil {
			return nil, nil, err
		}
	}

	// The Security header's namespace context: what is in scope where it is
	// inserted, plus its own declarations.
	at := env.header
	if at < 0 {
		at = 0
	}
	sc := scopeAt(d, at)
	root := d.Root()
	if root.Prefix != "" && sc[root.Prefix] == env.soapNS {
		p.soapPfx = root.Prefix
	} else {
		p.soapPfx, p.soapDecl = "soapenv", true
	}
	secScope := sc.with("wsse", nsWSSE, "wsu", nsWSU)
	if p.soapDecl {
		secScope = secScope.with(p.soapPfx, env.soapNS)
	}

	var edits []edit
	edits = append(edits, headerEdit(d, env))

	// Body first, then Timestamp, like WSS4J; then the chosen headers.
	_, bodyRef, bodyEdit, err := idEdit(r, d, env.body, "id-")
	if err != nil {
		return nil, nil, err
	}
	p.refs = append(p.refs, bodyRef)
	if p.tsID != "" {
		p.refs = append(p.refs, ref{id: p.tsID, prefixes: prefixList(secScope, "wsu")})
	}
	for _, id := range p.confIDs {
		p.refs = append(p.refs, ref{id: id, prefixes: prefixList(secScope, "wsu", "wsse11")})
	}
	for _, h := range env.signed {
		_, rf, e, err := idEdit(r, d, h, "id-")
		if err != nil {
			return nil, nil, err
		}
		p.refs = append(p.refs, rf)
		if e.pre != nil {
			edits = append(edits, e)
		}
	}
	edits = append(edits, bodyEdits(d, env.body, bodyEdit.pre)...)
	p.siPrefixes = prefixList(secScope.with("ds", nsDS), "ds")
	slices.SortStableFunc(edits, func(a, b edit) int { return cmp.Compare(a.at, b.at) })
	return p, edits, nil
}

// idEdit returns element i's wsu:Id (kept if present, WSS 1.1 §4), its
// Reference, and the attribute insertion that adds the id when missing.
func idEdit(r *resolved, d *xmlscan.Document, i int, prefix string) (string, ref, edit, error) {
	parent := scopeAt(d, d.Elements[i].Parent)
	if v := wsuID(d, i); v != "" {
		return v, ref{id: v, prefixes: prefixList(parent, visiblePrefixes(d, i)...)}, edit{}, nil
	}
	v, err := newID(r, prefix)
	if err != nil {
		return "", ref{}, edit{}, err
	}
	pfx, declare := idPrefix(d, i)
	var b buf
	if declare {
		b.attr("xmlns:"+pfx, nsWSU)
	}
	b.attr(pfx+":Id", v)
	tc := tagClose(d, i)
	return v, ref{id: v, prefixes: prefixList(parent, visiblePrefixes(d, i, pfx)...)},
		edit{at: tc, end: tc, pre: b}, nil
}

// headerEdit inserts the Security header as the first Header block,
// creating the Header (with the Envelope's prefix) when there is none.
func headerEdit(d *xmlscan.Document, env *envelope) edit {
	if env.header < 0 {
		q := string(d.Data[d.Root().Start+1 : d.Root().Start+1+d.Root().QNameLen()])
		h := "Header"
		if i := len(q) - len("Envelope"); i > 0 {
			h = q[:i] + h
		}
		at := d.Root().StartEnd
		return edit{at: at, end: at, pre: []byte("<" + h + ">"), slot: slotSecurity, post: []byte("</" + h + ">")}
	}
	el := &d.Elements[env.header]
	if el.Flags&xmlscan.FlagEmpty != 0 {
		return edit{at: tagClose(d, env.header), end: el.End, pre: []byte(">"), slot: slotSecurity,
			post: []byte("</" + string(qname(d, env.header)) + ">")}
	}
	return edit{at: el.StartEnd, end: el.StartEnd, slot: slotSecurity}
}

// bodyEdits adds the id attributes to the Body start tag and makes its
// content a slot, rewriting <Body/> as a start-end pair so it can hold
// EncryptedData.
func bodyEdits(d *xmlscan.Document, body int, attrs []byte) []edit {
	el := &d.Elements[body]
	tc := tagClose(d, body)
	if el.Flags&xmlscan.FlagEmpty != 0 {
		return []edit{{at: tc, end: el.End, pre: append(attrs, '>'), slot: slotBody,
			post: []byte("</" + string(qname(d, body)) + ">")}}
	}
	var out []edit
	if len(attrs) > 0 {
		out = append(out, edit{at: tc, end: tc, pre: attrs})
	}
	return append(out, edit{at: el.StartEnd, end: el.EndStart, slot: slotBody, orig: d.Data[el.StartEnd:el.EndStart]})
}

// assemble applies the edits (sorted by position) to the input. encBody,
// when not nil, replaces the Body content.
func assemble(d *xmlscan.Document, edits []edit, sec, encBody []byte) []byte {
	return assembleInto(nil, d, edits, sec, encBody)
}

// assembleInto is assemble reusing dst's storage when it is large enough:
// Secure builds the message three times, and for a large response fresh
// slices cost their size in page faults and clearing each time. dst must
// not share storage with d, sec or encBody.
func assembleInto(dst []byte, d *xmlscan.Document, edits []edit, sec, encBody []byte) []byte {
	out := dst[:0]
	if n := assembledLen(d, edits, sec, encBody); cap(out) < n {
		out = make([]byte, 0, n)
	}
	body := encBody
	last := 0
	for _, e := range edits {
		out = append(out, d.Data[last:e.at]...)
		out = append(out, e.pre...)
		switch e.slot {
		case slotSecurity:
			out = append(out, sec...)
		case slotBody:
			if body != nil {
				out = append(out, body...)
			} else {
				out = append(out, e.orig...)
			}
		}
		out = append(out, e.post...)
		last = e.end
	}
	return append(out, d.Data[last:]...)
}

// assembledLen bounds the length of an assembled message.
func assembledLen(d *xmlscan.Document, edits []edit, sec, encBody []byte) int {
	n := len(d.Data) + len(sec) + len(encBody)
	for _, e := range edits {
		n += len(e.pre) + len(e.post)
	}
	return n
}
