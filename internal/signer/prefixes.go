package signer

import (
	"slices"
	"strconv"

	"github.com/wssgw/wssgw/internal/c14n"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// scope is the in-scope namespace bindings at some element: prefix → URI,
// "" for the default namespace.
type scope map[string]string

// scopeAt collects the bindings in scope at element i (its own
// declarations included); the nearest declaration of a prefix wins.
func scopeAt(d *xmlscan.Document, i int) scope {
	s := scope{}
	for ; i >= 0; i = d.Elements[i].Parent {
		for _, ns := range d.NSDeclsOf(i) {
			if _, seen := s[ns.Prefix]; !seen {
				s[ns.Prefix] = ns.URI
			}
		}
	}
	return s
}

// with returns a copy of s overlaid with the bindings in kv (prefix, uri
// pairs), as declarations on a child element would.
func (s scope) with(kv ...string) scope {
	n := make(scope, len(s)+len(kv)/2)
	for k, v := range s {
		n[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		n[kv[i]] = kv[i+1]
	}
	return n
}

// prefixList is the InclusiveNamespaces PrefixList for an element whose
// ancestors give it the bindings in s and whose own tag visibly uses the
// prefixes in visible (exc-c14n §3). Listing the inherited prefixes the
// apex does not use is what WSS4J does: it keeps QName-valued content
// (xsi:type="ns:T", SOAP fault codes) verifiable after the element is
// moved under ancestors that bind those prefixes differently (exc-c14n §2.4
// names that risk). The list is sorted so that the output is reproducible.
// Beyond c14n.MaxPrefixes no list is emitted, which is always correct and
// keeps the message within what the verifier side accepts.
func prefixList(s scope, visible ...string) []string {
	var out []string
	for p, uri := range s {
		if uri == "" || p == "xml" || slices.Contains(visible, p) {
			continue // xmlns="" undeclares; xml is never rendered
		}
		if p == "" {
			p = "#default"
		}
		out = append(out, p)
	}
	if len(out) > c14n.MaxPrefixes {
		return nil
	}
	slices.Sort(out)
	return out
}

// visiblePrefixes returns the prefixes element i's own tag uses: its name
// ("" when unprefixed, i.e. the default namespace) and its attributes.
func visiblePrefixes(d *xmlscan.Document, i int, extra ...string) []string {
	v := append([]string{d.Elements[i].Prefix}, extra...)
	for _, a := range d.AttrsOf(i) {
		if a.Prefix != "" {
			v = append(v, a.Prefix)
		}
	}
	// The element's own declarations are not inherited: exc-c14n renders
	// them itself when they are used, and listing one that is not used
	// would only add noise.
	for _, ns := range d.NSDeclsOf(i) {
		v = append(v, ns.Prefix)
	}
	return v
}

// idPrefix picks a prefix for a wsu:Id attribute on element i: one already
// bound to the wsu namespace there, or an unbound one to declare on i.
// Rebinding a prefix that is bound to something else would change the
// meaning of the descendants' names, so such prefixes are skipped.
func idPrefix(d *xmlscan.Document, i int) (prefix string, declare bool) {
	for n := 0; ; n++ {
		p := "wsu"
		if n > 0 {
			p += strconv.Itoa(n)
		}
		uri, ok := d.LookupPrefix(i, p)
		if ok && uri == nsWSU {
			return p, false
		}
		if !ok {
			return p, true
		}
	}
}
