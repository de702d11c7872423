package c14n

// Namespace axis processing.
//
// s.rendered holds the namespace nodes rendered by the open output
// elements, innermost last. A namespace node is "already in effect" when
// the nearest rendered node with its prefix has its URI; an absent default
// namespace counts as xmlns="" (C14N 1.0 §2.3: xmlns="" is emitted only if
// the nearest output ancestor has a non-empty default namespace).

// effective returns the URI in effect in the output for prefix.
func (s *state) effective(prefix string) string {
	for k := len(s.rendered) - 1; k >= 0; k-- {
		if s.rendered[k].prefix == prefix {
			return s.rendered[k].uri
		}
	}
	return ""
}

// consider adds the namespace node (prefix, uri) of the current element to
// the candidates unless it is already in effect in the output ancestor or
// already a candidate.
func (s *state) consider(prefix, uri string) {
	if prefix == "xml" { // never rendered (C14N 1.0 §2.3, exc-c14n §3)
		return
	}
	for _, b := range s.cand {
		if b.prefix == prefix {
			return
		}
	}
	if s.effective(prefix) != uri {
		s.cand = append(s.cand, binding{prefix, uri})
	}
}

// excNamespaces selects the namespace nodes exclusive canonicalization
// renders on element i (exc-c14n §3): those visibly utilized by the
// element (its own prefix, or the default namespace when unprefixed) or by
// its attributes (prefixed ones only: unprefixed attributes are in no
// namespace), plus those whose prefix is in the InclusiveNamespaces
// PrefixList, which are handled as in Canonical XML; in both cases only
// when not already in effect in the output ancestor.
func (s *state) excNamespaces(i int, apex bool) {
	d := s.d
	e := &d.Elements[i]
	s.consider(e.Prefix, e.Space)
	for _, a := range d.AttrsOf(i) {
		if a.Prefix != "" {
			s.consider(a.Prefix, a.Space)
		}
	}
	if len(s.prefixes) == 0 {
		return
	}
	if apex {
		// On the apex, every in-scope namespace node of a listed prefix
		// (the output has no ancestor that could carry it).
		for _, p := range s.prefixes {
			if uri, ok := d.LookupPrefix(i, p); ok {
				s.consider(p, uri)
			}
		}
		return
	}
	// Below the apex the in-scope set only changes by the element's own
	// declarations.
	for _, ns := range d.NSDeclsOf(i) {
		if s.inList(ns.Prefix) {
			s.consider(ns.Prefix, ns.URI)
		}
	}
}

// inclusiveNamespaces selects the namespace nodes Canonical XML renders on
// element i (C14N 1.0 §2.3, 1.1 §2.3): on the apex every in-scope
// namespace node (the nearest declaration of each prefix wins; xmlns=""
// means no default namespace node), below it the element's own
// declarations that change the binding in effect.
func (s *state) inclusiveNamespaces(i int, apex bool) {
	d := s.d
	if !apex {
		for _, ns := range d.NSDeclsOf(i) {
			s.consider(ns.Prefix, ns.URI)
		}
		return
	}
	seen := s.attrs[:0] // reused as a list of NSDecls indices already shadowing
	for j := i; j >= 0; j = d.Elements[j].Parent {
		r := d.Elements[j].NS
	decls:
		for k := r.Start; k < r.End; k++ {
			ns := &d.NSDecls[k]
			for _, o := range seen {
				if d.NSDecls[o].Prefix == ns.Prefix {
					continue decls
				}
			}
			seen = append(seen, k)
			s.consider(ns.Prefix, ns.URI)
		}
	}
	s.attrs = seen[:0]
}

// sortBindings sorts by prefix; "" (the default namespace) sorts first.
func sortBindings(b []binding) {
	for x := 1; x < len(b); x++ {
		for y := x; y > 0 && b[y].prefix < b[y-1].prefix; y-- {
			b[y], b[y-1] = b[y-1], b[y]
		}
	}
}

// relative reports a relative URI reference: non-empty and without a
// scheme (RFC 3986 §3.1: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":").
// C14N 1.0 §2 (and so exc-c14n and C14N 1.1) fails on relative namespace
// URIs.
func relative(uri string) bool {
	if uri == "" {
		return false
	}
	for k := 0; k < len(uri); k++ {
		c := uri[k]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case k > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		case k > 0 && c == ':':
			return false
		default:
			return true
		}
	}
	return true
}
