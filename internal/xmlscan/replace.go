package xmlscan

import (
	"bytes"
	"sort"
)

// ScanReplace gates the document that results from replacing element i of
// old (the bytes old.Data[Start:End] of old.Elements[i]) with frag, and
// records it in d exactly as Scan of those bytes would: the same Document
// on success, the same *Error on failure. d.Data is a new buffer holding
// the new document; old is not modified. d must not be old.
//
// old must be the result of a successful Scan (or ScanReplace) by a
// Scanner with s's configuration. Only frag is scanned, from the state the
// full scan is in where frag starts (the open elements, the namespace
// bindings in scope, every counter a limit applies to); the elements before
// and after it are copied with their offsets and indices moved. This is how
// the DOM engine puts decrypted plaintext in place of an EncryptedData
// without a second pass over the whole message (seed 002: re-parsing the
// decrypted message took ~20 % of WS-Security time in Santuario). The
// plaintext passes exactly the rules it would pass in the whole message,
// because it is scanned by the same code in the same state.
//
// When frag does not end cleanly inside the element's parent (an end tag
// closing the parent, an element left open, markup reaching past frag
// into what follows), when a limit over the whole document would be
// crossed after frag, or when frag holds a character the gate refuses,
// ScanReplace scans the whole new document instead, which gives the exact
// verdict at today's cost; no legitimate plaintext takes that path.
func (s *Scanner) ScanReplace(old *Document, i int, frag []byte, d *Document) error {
	_, err := s.scanReplace(old, i, frag, d)
	return err
}

// scanReplace is ScanReplace, also reporting whether it scanned the whole
// document (tests check that the fragment path is the one taken).
func (s *Scanner) scanReplace(old *Document, i int, frag []byte, d *Document) (whole bool, err error) {
	el := &old.Elements[i]
	a, b := el.Start, el.End
	data := make([]byte, 0, len(old.Data)-(b-a)+len(frag))
	data = append(append(append(data, old.Data[:a]...), frag...), old.Data[b:]...)
	if el.Parent < 0 || len(data) > s.lim.MaxBytes {
		// A new root, or a document too large: the whole scan decides
		// (its first check is the size).
		return true, s.Scan(data, d)
	}
	// The full scan checks every character before any markup. The bytes
	// around frag passed that check and meet frag at '>' and at a byte
	// that is no UTF-8 continuation, so the whole passes iff frag does;
	// if frag fails, only the full scan gives the error it would give.
	fragCR, cerr := validateChars(frag, a)
	if cerr != nil {
		return true, s.Scan(data, d)
	}
	ok, serr := s.replace(old, i, data, a+len(frag), d)
	switch {
	case serr != nil:
		return false, serr
	case !ok:
		return true, s.Scan(data, d)
	}
	d.HasCR = fragCR || old.HasCR && (bytes.IndexByte(old.Data[:a], '\r') >= 0 || bytes.IndexByte(old.Data[b:], '\r') >= 0)
	return false, nil
}

// replace scans data[a:e] (frag in place of element i of old) in the state
// of the full scan and builds d around it. It reports false, with no error,
// when the full scan must decide.
func (s *Scanner) replace(old *Document, i int, data []byte, e int, d *Document) (bool, *Error) {
	o := old.Elements[i]
	a, b, parent := o.Start, o.End, o.Parent
	delta := e - b // what the bytes after element i move by
	miscLo := sort.Search(len(old.Misc), func(k int) bool { return old.Misc[k].Span.Start >= a })
	miscHi := sort.Search(len(old.Misc), func(k int) bool { return old.Misc[k].Span.Start >= b })

	d.Reset()
	d.Data, d.BOM, d.Decl = data, old.BOM, old.Decl
	d.Elements = append(d.Elements, old.Elements[:i]...)
	d.Attrs = append(d.Attrs, old.Attrs[:o.Attrs.Start]...)
	d.NSDecls = append(d.NSDecls, old.NSDecls[:o.NS.Start]...)
	d.Misc = append(d.Misc, old.Misc[:miscLo]...)
	before := secCounts(old.Elements[:i])
	before.store(d)

	st := state{lim: &s.lim, prot: s.prot, only: s.only, skip: s.skip, d: d, data: data, cur: parent, nsDecls: o.NS.Start}
	chain := s.enter(&st, old, parent)
	prevEnd, text := textBefore(old, parent, i, miscLo)
	sc := &d.scratch
	sc.frames[len(sc.frames)-1].textLen = text

	// The content loop of the full scan (state.content), from the end of
	// the construct before element i, so that the text run around frag's
	// start is checked as one run, as the full scan checks it.
	s0 := b + bytes.IndexByte(old.Data[b:], '<') // the first markup after element i
	p := prevEnd
	for {
		j := bytes.IndexByte(data[p:], '<')
		if j < 0 {
			return false, newError(KindEOF, len(data), "unclosed element "+d.Elements[st.cur].Local)
		}
		if j > 0 {
			if err := st.text(p, p+j); err != nil {
				return false, err
			}
		}
		p += j
		if p >= e {
			// In step with the old scan at s0 only if frag closed
			// everything it opened and no markup spanned its end.
			if p != s0+delta || st.cur != parent {
				return false, nil
			}
			break
		}
		var err *Error
		switch data[p+1] {
		case '/':
			if st.cur == parent {
				return false, nil // frag closes the parent
			}
			p, err = st.endTag(p)
		case '!':
			p, err = st.bang(p)
		case '?':
			err = piError(data, p)
		default:
			p, err = st.startTag(p)
		}
		if err != nil {
			return false, err
		}
		if p > e {
			return false, nil // markup from frag reached past it
		}
	}

	// From s0 on, the full scan reads what the old one read, in the same
	// open elements and bindings: only the counters differ. They only
	// grow, so the whole document is within a limit iff its totals are.
	next := o.Next
	attrAfter, nsAfter := len(old.Attrs), len(old.NSDecls)
	if next < len(old.Elements) {
		attrAfter, nsAfter = old.Elements[next].Attrs.Start, old.Elements[next].NS.Start
	}
	after := secCounts(old.Elements[next:])
	lim := &s.lim
	textLimit := lim.MaxTextLen
	if sc.frames[len(sc.frames)-1].class&classB64 != 0 {
		textLimit = lim.MaxBase64Len
	}
	switch {
	case len(d.Elements)+len(old.Elements)-next > lim.MaxElements,
		st.nsDecls+len(old.NSDecls)-nsAfter > lim.MaxNSDecls,
		d.References+after.refs > lim.MaxReferences,
		d.Transforms+after.transforms > lim.MaxTransforms,
		d.Signatures+after.sigs > lim.MaxSignatures,
		d.EncryptedKeys+after.eks > lim.MaxEncryptedKeys,
		d.EncryptedData+after.eds > lim.MaxEncryptedData,
		sc.frames[len(sc.frames)-1].textLen+textFrom(old, parent, i, s0, miscHi) > textLimit:
		return false, nil
	}

	shiftE, shiftA, shiftN := len(d.Elements)-next, len(d.Attrs)-attrAfter, len(d.NSDecls)-nsAfter
	for _, x := range old.Elements[next:] {
		x.Start, x.StartEnd, x.EndStart, x.End = x.Start+delta, x.StartEnd+delta, x.EndStart+delta, x.End+delta
		if x.Parent >= next {
			x.Parent += shiftE
		}
		x.Next += shiftE
		x.Attrs = Range{x.Attrs.Start + shiftA, x.Attrs.End + shiftA}
		x.NS = Range{x.NS.Start + shiftN, x.NS.End + shiftN}
		d.Elements = append(d.Elements, x)
	}
	for _, x := range old.Attrs[attrAfter:] {
		x.Name = Span{x.Name.Start + delta, x.Name.End + delta}
		x.Value = Span{x.Value.Start + delta, x.Value.End + delta}
		d.Attrs = append(d.Attrs, x)
	}
	for _, x := range old.NSDecls[nsAfter:] {
		x.Name = Span{x.Name.Start + delta, x.Name.End + delta}
		x.Value = Span{x.Value.Start + delta, x.Value.End + delta}
		d.NSDecls = append(d.NSDecls, x)
	}
	for _, x := range old.Misc[miscHi:] {
		x.Span = Span{x.Span.Start + delta, x.Span.End + delta}
		if x.Parent >= next {
			x.Parent += shiftE
		}
		d.Misc = append(d.Misc, x)
	}
	d.References += after.refs
	d.Transforms += after.transforms
	d.Signatures += after.sigs
	d.EncryptedKeys += after.eks
	d.EncryptedData += after.eds
	for _, k := range chain {
		x := &d.Elements[k]
		x.EndStart, x.End, x.Next = x.EndStart+delta, x.End+delta, x.Next+shiftE
	}
	chainFlags(d, chain)
	return true, nil
}

// enter puts st in the state the full scan is in inside element parent of
// old: its ancestors open, their namespace bindings in scope, the
// protected and element-only rules in force. It returns the open elements,
// root first.
func (s *Scanner) enter(st *state, old *Document, parent int) []int {
	chain := make([]int, old.Elements[parent].Depth)
	for k, x := len(chain)-1, parent; x >= 0; k, x = k-1, old.Elements[x].Parent {
		chain[k] = x
	}
	sc := &st.d.scratch
	for _, k := range chain {
		base := len(sc.bindings)
		for _, ns := range old.NSDeclsOf(k) {
			sc.push(ns.Prefix, sc.hashString(ns.Prefix), ns.URI, base)
		}
		x := &old.Elements[k]
		only := isListed(s.only, x)
		sc.frames = append(sc.frames, frame{class: classify(x.Space), elemOnly: only})
		if x.Flags&FlagProtected != 0 {
			st.protected++
		}
		st.elemOnly = only
	}
	return chain
}

// textBefore returns where the last construct in parent before element i
// ends (the parent's start tag if none) and how many bytes of character
// data the full scan has counted in parent up to there.
func textBefore(old *Document, parent, i, miscLo int) (end, text int) {
	pe := &old.Elements[parent]
	end = pe.StartEnd
	markup := 0
	for c := old.FirstChild(parent); c != i; c = old.NextSibling(c) {
		markup += old.Elements[c].End - old.Elements[c].Start
		end = old.Elements[c].End
	}
	for _, n := range old.Misc[:miscLo] {
		if n.Parent == parent {
			markup += miscMarkup(n)
			end = max(end, n.Span.End)
		}
	}
	return end, end - pe.StartEnd - markup
}

// textFrom returns the bytes of character data in parent from offset s0
// (markup after element i) to the parent's end tag.
func textFrom(old *Document, parent, i, s0, miscHi int) int {
	text := old.Elements[parent].EndStart - s0
	for c := old.NextSibling(i); c >= 0; c = old.NextSibling(c) {
		text -= old.Elements[c].End - old.Elements[c].Start
	}
	for _, n := range old.Misc[miscHi:] {
		if n.Parent == parent {
			text -= miscMarkup(n)
		}
	}
	return text
}

// miscMarkup is the bytes of n that are not character data: all of a
// comment, the delimiters of a CDATA section (its content counts as text,
// state.cdata).
func miscMarkup(n Node) int {
	if n.Kind == NodeComment {
		return n.Span.Len()
	}
	return len("<![CDATA[") + len("]]>")
}

// chainFlags recomputes the subtree flags of the open elements from their
// own flags, their own comments and CDATA sections, and their children:
// the old flags held element i's contribution, which is gone.
func chainFlags(d *Document, chain []int) {
	misc := make([]Flags, len(chain))
	for _, n := range d.Misc {
		if k := d.Elements[n.Parent].Depth - 1; k < len(chain) && chain[k] == n.Parent {
			if n.Kind == NodeComment {
				misc[k] |= FlagComment
			} else {
				misc[k] |= FlagCDATA
			}
		}
	}
	const own = FlagEmpty | FlagTextRef | FlagAttrRef | FlagAttrNorm | FlagProtected
	for k := len(chain) - 1; k >= 0; k-- {
		x := &d.Elements[chain[k]]
		f := x.Flags&own | misc[k]
		if f&(FlagTextRef|FlagAttrRef) != 0 {
			f |= FlagRef
		}
		for c := d.FirstChild(chain[k]); c >= 0; c = d.NextSibling(c) {
			f |= d.Elements[c].Flags & subtreeFlags
		}
		x.Flags = f
	}
}

// counts are the elements of the XML Signature and Encryption namespaces
// that limits apply to (state.count).
type counts struct{ refs, transforms, sigs, eks, eds int }

func secCounts(els []Element) counts {
	var c counts
	for k := range els {
		x := &els[k]
		switch {
		case x.Space == NamespaceDSig && x.Local == "Reference":
			c.refs++
		case x.Space == NamespaceDSig && x.Local == "Transform":
			c.transforms++
		case x.Space == NamespaceDSig && x.Local == "Signature":
			c.sigs++
		case x.Space == NamespaceXEnc && x.Local == "EncryptedKey":
			c.eks++
		case x.Space == NamespaceXEnc && x.Local == "EncryptedData":
			c.eds++
		}
	}
	return c
}

func (c counts) store(d *Document) {
	d.References, d.Transforms, d.Signatures, d.EncryptedKeys, d.EncryptedData = c.refs, c.transforms, c.sigs, c.eks, c.eds
}
