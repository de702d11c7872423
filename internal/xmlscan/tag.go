package xmlscan

import (
	"bytes"
	"encoding/binary"
)

// startTag scans the start tag or empty-element tag at p (XML 1.0 §3.1
// [40], [44]) and opens the element.
func (st *state) startTag(p int) (int, *Error) {
	d, lim := st.d, st.lim
	if len(d.Elements) >= lim.MaxElements {
		return p, newError(KindLimitElements, p, "too many elements")
	}
	depth := len(d.scratch.frames) + 1
	if depth > lim.MaxDepth {
		return p, newError(KindLimitDepth, p, "elements nested too deeply")
	}
	name, nameEnd, err := st.qname(p+1, "element")
	if err != nil {
		return p, err
	}
	prefix, local, ph := name.prefix, name.local, name.ph // name is reused by the attributes' names
	f := frame{nameW0: name.w0, nameW1: name.w1}
	if len(name.raw) <= shortName {
		f.nameLen = uint8(len(name.raw))
	}
	attrLo, nsLo := len(d.Attrs), len(d.NSDecls)
	st.tagFlags = 0
	d.scratch.attrPH = d.scratch.attrPH[:0]
	end, empty, err := st.attributes(nameEnd, attrLo, nsLo)
	if err != nil {
		return p, err
	}
	if err := st.declare(nsLo); err != nil {
		return p, err
	}
	idx := len(d.Elements)
	st.growElements(p)
	d.Elements = append(d.Elements, Element{
		Start: p, StartEnd: end, Depth: depth, Parent: st.cur,
		Prefix: prefix, Local: local,
		Attrs: Range{attrLo, len(d.Attrs)}, NS: Range{nsLo, len(d.NSDecls)},
		Flags: st.tagFlags,
	})
	e := &d.Elements[idx]
	class, err := st.resolveElement(e, ph, p+1)
	if err != nil {
		return p, err
	}
	if err := st.resolveAttrs(d.Attrs[attrLo:]); err != nil {
		return p, err
	}
	if err := st.count(e, class, p); err != nil {
		return p, err
	}
	f.class = class
	st.open(idx, f, empty)
	return end, nil
}

// qname scans and validates a QName at p (kind says what it names, for
// errors) and returns it (valid until the next call) and its end.
func (st *state) qname(p int, kind string) (*qname, int, *Error) {
	end, high := scanName(st.data, p)
	b := st.data[p:end:len(st.data)] // wordName may read up to the end of the input, not past it
	switch {
	case len(b) == 0 && p >= len(st.data):
		return nil, p, newError(KindEOF, p, "unexpected end of input")
	case len(b) == 0:
		return nil, p, newError(KindSyntax, p, "expected "+kind+" name")
	case len(b) > st.lim.MaxNameLen:
		return nil, p, newError(KindLimitNameLen, p+st.lim.MaxNameLen, kind+" name too long")
	}
	q := st.d.scratch.qname(b, high)
	if q == nil {
		return nil, p, newError(KindInvalidName, p, "invalid "+kind+" name")
	}
	return q, end, nil
}

// attributes scans the attribute list from p up to and including '>' or
// "/>". Attributes must be separated by white space (§3.1 [40]:
// '<' Name (S Attribute)* S? '>'), which encoding/xml does not require.
func (st *state) attributes(p, attrLo, nsLo int) (end int, empty bool, err *Error) {
	data := st.data
	for {
		s := skipSpace(data, p)
		if s >= len(data) {
			return s, false, newError(KindEOF, s, "unexpected end of input in a tag")
		}
		switch data[s] {
		case '>':
			return s + 1, false, nil
		case '/':
			if s+1 < len(data) && data[s+1] == '>' {
				return s + 2, true, nil
			}
			if s+1 >= len(data) {
				return s, false, newError(KindEOF, s, "unexpected end of input in a tag")
			}
			return s, false, newError(KindSyntax, s, "expected '>' after '/'")
		}
		if s == p {
			return s, false, newError(KindSyntax, s, "missing white space before attribute")
		}
		if p, err = st.attribute(s, attrLo, nsLo); err != nil {
			return p, false, err
		}
	}
}

// attribute scans one attribute at p (§3.1 [41] Attribute ::= Name Eq
// AttValue) and records it as an Attr or an NSDecl.
func (st *state) attribute(p, attrLo, nsLo int) (int, *Error) {
	data, d, lim := st.data, st.d, st.lim
	nameStart := p
	qn, nameEnd, err := st.qname(p, "attribute")
	if err != nil {
		return p, err
	}
	prefix, local := qn.prefix, qn.local
	q := skipSpace(data, nameEnd)
	if q >= len(data) || data[q] != '=' {
		return q, eofOr(data, q, KindSyntax, "expected '=' after attribute name")
	}
	q = skipSpace(data, q+1)
	if q >= len(data) || data[q] != '"' && data[q] != '\'' {
		return q, eofOr(data, q, KindSyntax, "attribute value must be quoted")
	}
	quote, vs := data[q], q+1
	k, class := valueEnd(data, vs, quote)
	if k < 0 {
		return vs, newError(KindEOF, len(data), "unterminated attribute value")
	}
	if k > lim.MaxAttrValueLen {
		return vs, newError(KindLimitAttrValue, vs+lim.MaxAttrValueLen, "attribute value too long")
	}
	ve := vs + k
	v := data[vs:ve]
	class, err = st.attrValue(v, vs, class)
	if err != nil {
		return vs, err
	}
	name, val := Span{nameStart, nameEnd}, Span{vs, ve}
	if prefix == "xmlns" || prefix == "" && local == "xmlns" {
		return ve + 1, st.nsDecl(prefix, local, name, val, quote, class, nsLo)
	}
	if len(d.Attrs)-attrLo >= lim.MaxAttrs {
		return nameStart, newError(KindLimitAttrs, nameStart, "too many attributes")
	}
	var f AttrFlags
	if class&2 != 0 {
		f |= AttrRef
	}
	if class != 0 {
		f |= AttrNorm
	}
	st.growAttrs(nameStart)
	d.Attrs = append(d.Attrs, Attr{
		Name: name, Prefix: prefix, Local: local, Value: val, Quote: quote, Flags: f,
	})
	d.scratch.attrPH = append(d.scratch.attrPH, qn.ph)
	return ve + 1, nil
}

// valueEnd returns the length of the attribute value at data[vs:] up to
// quote, or -1 if quote does not occur, and the attrSpecial classes of its
// bytes (attrClass): one pass, 32 bytes at a time where the CPU allows,
// where finding the quote and classifying the value were two (issue 14).
func valueEnd(data []byte, vs int, quote byte) (k int, class uint8) {
	if haveWideSIMD && len(data)-vs >= 32 {
		n, f := valueRun(&data[vs], len(data)-vs, quote)
		if f&valueRunFound != 0 {
			return n, uint8(f)
		}
		k, class = n, uint8(f)
	}
	j := bytes.IndexByte(data[vs+k:], quote)
	if j < 0 {
		return -1, 0
	}
	return k + j, class | attrClass(data[vs+k:vs+k+j])
}

// valueRunFound is the flag of valueRun that it stopped at the quote.
const valueRunFound = 0x100

// attrValue checks a raw attribute value of attrSpecial class class: no
// '<' (WFC: No < in Attribute Values), well-formed references. It returns
// the class.
func (st *state) attrValue(v []byte, vs int, class uint8) (uint8, *Error) {
	if class&1 != 0 {
		return 0, newError(KindLtInAttr, vs+bytes.IndexByte(v, '<'), "'<' in attribute value")
	}
	if class&2 != 0 {
		if err := checkRefs(v, vs); err != nil {
			return 0, err
		}
		st.tagFlags |= FlagAttrRef | FlagRef
	}
	if class != 0 {
		st.tagFlags |= FlagAttrNorm
	}
	return class, nil
}

// nsDecl records a namespace declaration; declare checks it once the tag
// is complete.
func (st *state) nsDecl(prefix, local string, name, val Span, quote, class uint8, nsLo int) *Error {
	d, lim := st.d, st.lim
	if len(d.NSDecls)-nsLo >= lim.MaxNSDeclsPerElement {
		return newError(KindLimitNSDeclsPerElement, name.Start, "too many namespace declarations on one element")
	}
	if st.nsDecls >= lim.MaxNSDecls {
		return newError(KindLimitNSDecls, name.Start, "too many namespace declarations")
	}
	st.nsDecls++
	uri, err := st.nsURI(st.data[val.Start:val.End], class, val.Start)
	if err != nil {
		return err
	}
	if prefix == "" {
		local = "" // xmlns: the default namespace
	}
	d.NSDecls = append(d.NSDecls, NSDecl{Name: name, Prefix: local, URI: uri, Value: val, Quote: quote})
	return nil
}

// countXEnc applies the element count limits of the XML Encryption
// namespace. Each EncryptedKey can cost a private-key operation and each
// EncryptedData a decryption and a new pass over the message, so their
// number is bounded here, before an engine looks at any of them.
func (st *state) countXEnc(e *Element, p int) *Error {
	d, lim := st.d, st.lim
	switch e.Local {
	case "EncryptedKey":
		if d.EncryptedKeys++; d.EncryptedKeys > lim.MaxEncryptedKeys {
			return newError(KindLimitEncryptedKeys, p, "too many xenc:EncryptedKey elements")
		}
	case "EncryptedData":
		if d.EncryptedData++; d.EncryptedData > lim.MaxEncryptedData {
			return newError(KindLimitEncryptedData, p, "too many xenc:EncryptedData elements")
		}
	}
	return nil
}

// count applies the element count limits of the XML Signature and XML
// Encryption namespaces.
func (st *state) count(e *Element, class nsClass, p int) *Error {
	if class&classXEnc != 0 {
		return st.countXEnc(e, p)
	}
	if class&classDSig == 0 {
		return nil
	}
	d, lim := st.d, st.lim
	switch e.Local {
	case "Reference":
		if d.References++; d.References > lim.MaxReferences {
			return newError(KindLimitReferences, p, "too many ds:Reference elements")
		}
	case "Transform":
		if d.Transforms++; d.Transforms > lim.MaxTransforms {
			return newError(KindLimitTransforms, p, "too many ds:Transform elements")
		}
	case "Signature":
		if d.Signatures++; d.Signatures > lim.MaxSignatures {
			return newError(KindLimitSignatures, p, "too many ds:Signature elements")
		}
	}
	return nil
}

// open makes element idx the current element, or closes it at once for an
// empty-element tag; f is its frame, but for elemOnly.
func (st *state) open(idx int, f frame, empty bool) {
	d := st.d
	e := &d.Elements[idx]
	listed := st.skip&nameLenBit(len(e.Local)) == 0
	if listed && isListed(st.prot, e) {
		e.Flags |= FlagProtected
	}
	if empty {
		e.Flags |= FlagEmpty
		e.EndStart, e.End, e.Next = e.StartEnd, e.StartEnd, idx+1
		d.scratch.pop(e.NS.Len())
		if e.Parent >= 0 {
			d.Elements[e.Parent].Flags |= e.Flags & subtreeFlags
		}
		return
	}
	only := listed && isListed(st.only, e)
	f.elemOnly = only
	d.scratch.frames = append(d.scratch.frames, f)
	if e.Flags&FlagProtected != 0 {
		st.protected++
	}
	st.cur, st.elemOnly = idx, only
}

// isListed reports whether e's expanded name is one of names.
func isListed(names []Name, e *Element) bool {
	for _, n := range names {
		if e.Local == n.Local && e.Space == n.Space {
			return true
		}
	}
	return false
}

// endTag scans the end tag at p (§3.1 [42] ETag ::= '</' Name S? '>'),
// which must repeat the start tag's name byte for byte (WFC: Element Type
// Match), and closes the current element.
func (st *state) endTag(p int) (int, *Error) {
	data, d := st.data, st.d
	e := &d.Elements[st.cur]
	name := data[e.Start+1 : e.Start+1+e.QNameLen()]
	nameEnd := p + 2 + len(name)
	if nameEnd > len(data) {
		if bytes.HasPrefix(name, data[p+2:]) {
			return p, newError(KindEOF, p, "unexpected end of input in an end tag")
		}
		return p, newError(KindTagMismatch, p, "end tag does not match "+e.Local)
	}
	// Compare bytes (as two words for a short name with sixteen bytes
	// to read), then make sure the end tag's name does not go on.
	if !st.sameName(p+2, name) || nameEnd < len(data) && nameTab[data[nameEnd]]&nameCont != 0 {
		return p, newError(KindTagMismatch, p, "end tag does not match "+e.Local)
	}
	q := skipSpace(data, nameEnd)
	if q >= len(data) || data[q] != '>' {
		return q, eofOr(data, q, KindSyntax, "expected '>' in end tag")
	}
	e.EndStart, e.End, e.Next = p, q+1, len(d.Elements)
	d.scratch.pop(e.NS.Len())
	d.scratch.frames = d.scratch.frames[:len(d.scratch.frames)-1]
	if e.Flags&FlagProtected != 0 {
		st.protected--
	}
	st.elemOnly = len(d.scratch.frames) > 0 && d.scratch.frames[len(d.scratch.frames)-1].elemOnly
	st.cur = e.Parent
	if st.cur >= 0 {
		d.Elements[st.cur].Flags |= e.Flags & subtreeFlags
	}
	return q + 1, nil
}

// sameName reports whether data[q:] starts with name, the current
// element's qualified name.
func (st *state) sameName(q int, name []byte) bool {
	f := &st.d.scratch.frames[len(st.d.scratch.frames)-1]
	if f.nameLen == 0 || q+16 > len(st.data) {
		return bytes.Equal(st.data[q:q+len(name)], name)
	}
	x := st.data[q : q+16 : q+16]
	m := &wordMasks[f.nameLen&31]
	return binary.LittleEndian.Uint64(x)&m[0] == f.nameW0 && binary.LittleEndian.Uint64(x[8:])&m[1] == f.nameW1
}

// eofOr returns an EOF error if q is past the input, else kind.
func eofOr(data []byte, q int, kind Kind, detail string) *Error {
	if q >= len(data) {
		return newError(KindEOF, q, "unexpected end of input")
	}
	return newError(kind, q, detail)
}
