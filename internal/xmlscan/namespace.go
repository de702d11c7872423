package xmlscan

import "bytes"

// Namespace handling per Namespaces in XML 1.0 (third edition). The gate
// resolves every prefix itself, because encoding/xml silently keeps an
// undeclared prefix as if it were a namespace URI and lets xml and xmlns be
// rebound (security.md B5, CVE-2020-29509/29511).

// nsClass marks namespaces the limits treat specially.
type nsClass uint8

const (
	// classB64: text is bounded by MaxBase64Len instead of MaxTextLen.
	classB64 nsClass = 1 << iota
	// classDSig: the XML Signature namespace, whose Reference, Transform
	// and Signature elements are counted.
	classDSig
	// classXEnc: the XML Encryption namespace, whose EncryptedKey and
	// EncryptedData elements are counted.
	classXEnc
)

func classify(uri string) nsClass {
	switch uri {
	case NamespaceDSig:
		return classB64 | classDSig
	case NamespaceXEnc:
		return classB64 | classXEnc
	case NamespaceDSig11, NamespaceXEnc11, NamespaceWSSE, NamespaceWSSE11:
		return classB64
	}
	return 0
}

// nsBinding is one in-scope binding. Bindings form a stack in document
// order; prev links the bindings of one prefix so that closing an element
// restores the outer binding in O(1).
type nsBinding struct {
	prefix string
	uri    string
	class  nsClass
	prev   int32 // previous binding of the same prefix, -1 if none
	slot   int32 // index in scratch.prefixes
}

// prefixSlot maps a prefix to its innermost binding. The table is keyed by
// a seeded hash, so lookups cost O(1) whatever the number of bindings in
// scope (a namespace-declaration bomb cannot make resolution quadratic).
type prefixSlot struct {
	prefix string
	used   bool
	top    int32 // innermost binding, -1 if the prefix is not bound
}

// slotFor returns the table slot of prefix, inserting it if absent.
func (s *scratch) slotFor(prefix string, h uint64) int {
	if 2*(s.nPrefix+1) > len(s.prefixes) {
		s.grow()
	}
	mask := len(s.prefixes) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		ps := &s.prefixes[i]
		if !ps.used {
			*ps = prefixSlot{prefix: prefix, used: true, top: -1}
			s.nPrefix++
			return i
		}
		if ps.prefix == prefix {
			return i
		}
	}
}

// find returns the slot of prefix, or -1.
func (s *scratch) find(prefix string, h uint64) int {
	mask := len(s.prefixes) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		ps := &s.prefixes[i]
		if !ps.used {
			return -1
		}
		if ps.prefix == prefix {
			return i
		}
	}
}

// grow doubles the prefix table and re-links the bindings to the new slots.
func (s *scratch) grow() {
	old := s.prefixes
	s.prefixes = make([]prefixSlot, 2*len(old))
	s.nPrefix = 0
	remap := make([]int32, len(old))
	for i, ps := range old {
		if ps.used {
			j := s.slotFor(ps.prefix, s.hashString(ps.prefix))
			s.prefixes[j].top = ps.top
			remap[i] = int32(j)
		}
	}
	for i := range s.bindings {
		s.bindings[i].slot = remap[s.bindings[i].slot]
	}
}

// push binds prefix to uri. It reports false if prefix is already bound by
// a binding at index >= base (a second declaration on the same element).
func (s *scratch) push(prefix string, h uint64, uri string, base int) bool {
	slot := s.slotFor(prefix, h)
	top := s.prefixes[slot].top
	if top >= 0 && int(top) >= base {
		return false
	}
	s.prefixes[slot].top = int32(len(s.bindings))
	s.bindings = append(s.bindings, nsBinding{
		prefix: prefix, uri: uri, class: classify(uri), prev: top, slot: int32(slot),
	})
	return true
}

// pop removes the n innermost bindings.
func (s *scratch) pop(n int) {
	for ; n > 0; n-- {
		b := &s.bindings[len(s.bindings)-1]
		s.prefixes[b.slot].top = b.prev
		s.bindings = s.bindings[:len(s.bindings)-1]
	}
}

// lookup returns the innermost binding of prefix, or nil.
func (s *scratch) lookup(prefix string, h uint64) *nsBinding {
	slot := s.find(prefix, h)
	if slot < 0 || s.prefixes[slot].top < 0 {
		return nil
	}
	return &s.bindings[s.prefixes[slot].top]
}

// declare validates the namespace declarations of the tag being scanned
// (d.NSDecls[lo:]) and brings them into scope. All of a tag's declarations
// apply to its own name and attributes, whatever their order.
func (st *state) declare(lo int) *Error {
	d, sc := st.d, &st.d.scratch
	base := len(sc.bindings)
	for i := lo; i < len(d.NSDecls); i++ {
		ns := &d.NSDecls[i]
		if err := checkDecl(ns); err != nil {
			return err
		}
		if !sc.push(ns.Prefix, sc.hashString(ns.Prefix), ns.URI, base) {
			return newError(KindDuplicateAttr, ns.Name.Start, "duplicate namespace declaration")
		}
	}
	return nil
}

// checkDecl enforces Namespaces in XML 1.0 §3 (Reserved Prefixes and
// Namespace Names) and NSC: No Prefix Undeclaring.
func checkDecl(ns *NSDecl) *Error {
	switch {
	case ns.Prefix == "xmlns":
		return newError(KindReservedNamespace, ns.Name.Start, "the xmlns prefix must not be declared")
	case ns.Prefix == "xml" && ns.URI != NamespaceXML:
		return newError(KindReservedNamespace, ns.Name.Start, "the xml prefix must not be bound to another namespace")
	case ns.Prefix != "xml" && ns.URI == NamespaceXML:
		return newError(KindReservedNamespace, ns.Value.Start, "the xml namespace must not be bound to another prefix")
	case ns.URI == NamespaceXMLNS:
		return newError(KindReservedNamespace, ns.Value.Start, "the xmlns namespace must not be declared")
	case ns.Prefix != "" && ns.URI == "":
		return newError(KindInvalidNamespace, ns.Value.Start, "a prefix must not be undeclared")
	}
	return nil
}

// nsURI returns the namespace name of a declaration's raw value: normalized
// (§3.3.3, since it is an attribute value) and interned. A namespace name is
// a URI reference and never contains white space; rejecting it also avoids a
// differential with encoding/xml, which does not normalize.
func (st *state) nsURI(raw []byte, class uint8, off int) (string, *Error) {
	sc := &st.d.scratch
	v := raw
	if class&2 != 0 {
		var err error
		if v, err = NormalizeAttrValue(raw, sc.buf); err != nil {
			return "", newError(KindBadReference, off, "bad reference in namespace name")
		}
		sc.buf = v[:0]
	}
	if class&4 != 0 || bytes.IndexByte(v, ' ') >= 0 || class&2 != 0 && bytes.ContainsAny(v, "\t\n\r") {
		return "", newError(KindInvalidNamespace, off, "white space in namespace name")
	}
	return sc.uri(v), nil
}

// resolveElement sets the namespace of the element being scanned
// (NSC: Prefix Declared; elements must not have the prefix xmlns).
func (st *state) resolveElement(e *Element, prefixHash uint64, off int) (nsClass, *Error) {
	sc := &st.d.scratch
	if e.Prefix == "xmlns" || e.Prefix == "" && e.Local == "xmlns" {
		// An element named xmlns is not forbidden by the spec, but
		// encoding/xml gives it no namespace; reject the differential.
		return 0, newError(KindReservedNamespace, off, "element named with xmlns")
	}
	b := sc.lookup(e.Prefix, prefixHash)
	switch {
	case b != nil:
		e.Space = b.uri
		return b.class, nil
	case e.Prefix != "":
		return 0, newError(KindUndeclaredPrefix, off, "undeclared element prefix "+e.Prefix)
	}
	return 0, nil // no default namespace in scope
}

// resolveAttrs sets the namespace of each prefixed attribute (unprefixed
// attributes are in no namespace, Namespaces in XML 1.0 §6.2) and rejects
// two attributes with the same expanded name (§6.3), e.g. a:x and b:x with
// a and b bound to the same URI.
func (st *state) resolveAttrs(attrs []Attr) *Error {
	sc := &st.d.scratch
	for i := range attrs {
		a := &attrs[i]
		if a.Prefix == "" {
			continue
		}
		b := sc.lookup(a.Prefix, sc.attrPH[i])
		if b == nil {
			return newError(KindUndeclaredPrefix, a.Name.Start, "undeclared attribute prefix "+a.Prefix)
		}
		a.Space = b.uri
	}
	if i := st.duplicate(attrs); i >= 0 {
		return newError(KindDuplicateAttr, attrs[i].Name.Start, "duplicate attribute "+attrs[i].Local)
	}
	return nil
}

// duplicate returns the index of an attribute whose expanded name occurs
// earlier in attrs, or -1. Few attributes are compared pairwise; many go
// through a hash table so that a width attack stays linear.
func (st *state) duplicate(attrs []Attr) int {
	if len(attrs) <= 8 {
		for i := 1; i < len(attrs); i++ {
			for j := 0; j < i; j++ {
				if attrs[i].Local == attrs[j].Local && attrs[i].Space == attrs[j].Space {
					return i
				}
			}
		}
		return -1
	}
	sc := &st.d.scratch
	size := 16
	for size < 2*len(attrs) {
		size *= 2
	}
	if cap(sc.dups) < size {
		sc.dups = make([]int32, size)
	}
	tab := sc.dups[:size]
	for i := range tab {
		tab[i] = -1
	}
	mask := size - 1
	for i := range attrs {
		a := &attrs[i]
		h := sc.hashString(a.Local) ^ sc.hashString(a.Space)*0x9E3779B97F4A7C15
		for k := int(h) & mask; ; k = (k + 1) & mask {
			j := tab[k]
			if j < 0 {
				tab[k] = int32(i)
				break
			}
			if attrs[j].Local == a.Local && attrs[j].Space == a.Space {
				return i
			}
		}
	}
	return -1
}

// Base64Content reports whether character data of elements in namespace
// space is bounded by Limits.MaxBase64Len instead of MaxTextLen. The
// template automaton applies the same rule to its slots.
func Base64Content(space string) bool { return classify(space)&classB64 != 0 }
