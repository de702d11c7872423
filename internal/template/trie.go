package template

import (
	"bytes"

	"github.com/wssgw/wssgw/internal/xmlscan"
)

// node is a state of the merged automaton: a constant fragment to compare,
// then constant continuations (distinct first bytes), slot continuations,
// or the end of a template. Nodes are immutable once published: learning
// copies the path it changes (copy-on-write) and swaps the root, so
// matching never takes a lock.
type node struct {
	frag  []byte
	kids  []*node
	slots []*slotEdge
	leaf  *Template
	// tail, when set, is the only continuation: tail's slot tailK, its
	// fragment tailK+1, and so on to its end, matched linearly. A
	// template's unshared suffix is one node, not a node per slot; insert
	// expands a tail one step at a time where a new template diverges.
	tail  *Template
	tailK int
}

type slotEdge struct {
	class class
	term  byte
	limit uint8
	next  *node // next.frag starts with term
}

// insert returns a copy of n with t added. t's sequence continues at
// fragment k, offset off.
func insert(n *node, t *Template, k, off int) *node {
	c := *expand(n)
	rest := t.frag(k)[off:]
	common := commonPrefix(n.frag, rest)
	if common < len(n.frag) {
		tail := *n
		tail.frag = n.frag[common:]
		c = node{frag: n.frag[:common], kids: []*node{&tail}}
	}
	off += common
	if off == len(t.frag(k)) {
		if k == len(t.slots) {
			c.leaf = t
			return &c
		}
		s := t.slots[k]
		term := t.frag(k + 1)[0]
		c.slots = append([]*slotEdge(nil), c.slots...)
		for i, e := range c.slots {
			if e.class == s.class && e.term == term && e.limit == s.limit {
				ne := *e
				ne.next = insert(e.next, t, k+1, 0)
				c.slots[i] = &ne
				return &c
			}
		}
		c.slots = append(c.slots, &slotEdge{class: s.class, term: term, limit: s.limit, next: chain(t, k+1, 0)})
		return &c
	}
	b := t.frag(k)[off]
	c.kids = append([]*node(nil), c.kids...)
	for i, kid := range c.kids {
		if kid.frag[0] == b {
			c.kids[i] = insert(kid, t, k, off)
			return &c
		}
	}
	c.kids = append(c.kids, chain(t, k, off))
	return &c
}

// chain is the node matching t from fragment k, offset off, on.
func chain(t *Template, k, off int) *node {
	return &node{frag: t.frag(k)[off:], tail: t, tailK: k}
}

// expand returns n with its tail's first step made explicit: a leaf, or
// one slot edge to the tail's rest.
func expand(n *node) *node {
	if n.tail == nil {
		return n
	}
	t, k := n.tail, n.tailK
	c := &node{frag: n.frag}
	if k == len(t.slots) {
		c.leaf = t
		return c
	}
	s := t.slots[k]
	c.slots = []*slotEdge{{class: s.class, term: t.frag(k + 1)[0], limit: s.limit, next: chain(t, k+1, 0)}}
	return c
}

func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// span is a captured slot value: data[start:end].
type span struct{ start, end int }

// matcher is the state of one match.
type matcher struct {
	data    []byte
	caps    []span
	budget  int  // node visits left: backtracking is bounded
	rejects bool // some slot failed its class check
	limits  *xmlscan.Limits
}

// walk matches n at pos and returns the template whose path matched the
// whole input.
func (mt *matcher) walk(n *node, pos int) *Template {
	if mt.budget--; mt.budget < 0 {
		return nil
	}
	if !bytes.HasPrefix(mt.data[pos:], n.frag) {
		return nil
	}
	pos += len(n.frag)
	if n.tail != nil {
		return mt.linear(n.tail, n.tailK, pos)
	}
	if pos == len(mt.data) {
		return n.leaf
	}
	b := mt.data[pos]
	for _, kid := range n.kids {
		if kid.frag[0] == b {
			if t := mt.walk(kid, pos); t != nil {
				return t
			}
			break
		}
	}
	for _, e := range n.slots {
		if e.class == classBody {
			if t := mt.body(e, pos); t != nil {
				return t
			}
			continue
		}
		end := bytes.IndexByte(mt.data[pos:], e.term)
		if end < 0 {
			continue
		}
		if !check(e.class, mt.data[pos:pos+end], mt.limits, e.limit) {
			mt.rejects = true
			continue
		}
		mt.caps = append(mt.caps, span{pos, pos + end})
		if t := mt.walk(e.next, pos+end); t != nil {
			return t
		}
		mt.caps = mt.caps[:len(mt.caps)-1]
	}
	return nil
}

// linear matches t's slots and fragments from slot k at pos, as walk
// would the expanded nodes.
func (mt *matcher) linear(t *Template, k, pos int) *Template {
	n0 := len(mt.caps)
	for ; k < len(t.slots); k++ {
		if mt.budget--; mt.budget < 0 {
			break
		}
		s, next := t.slots[k], t.frag(k+1)
		if s.class == classBody {
			// The last slot: the rest of the message is its fragment.
			if k+1 != len(t.slots) || !bytes.HasSuffix(mt.data[pos:], next) {
				break
			}
			mt.caps = append(mt.caps, span{pos, len(mt.data) - len(next)})
			pos = len(mt.data)
			continue
		}
		end := bytes.IndexByte(mt.data[pos:], next[0])
		if end < 0 {
			break
		}
		if !check(s.class, mt.data[pos:pos+end], mt.limits, s.limit) {
			mt.rejects = true
			break
		}
		mt.caps = append(mt.caps, span{pos, pos + end})
		pos += end
		if !bytes.HasPrefix(mt.data[pos:], next) {
			break
		}
		pos += len(next)
	}
	if k == len(t.slots) && pos == len(mt.data) {
		return t
	}
	mt.caps = mt.caps[:n0]
	return nil
}

// maxBodyEnds bounds the candidate ends of a body slot tried: the markup
// after the Body content is its end tag, the Envelope's and white space.
const maxBodyEnds = 4

// body matches a body slot edge at pos: the Body content ends at one of
// the last '<' of the message (the rest is constant markup), tried from
// the end. Its content is gated on the hit path, not here.
func (mt *matcher) body(e *slotEdge, pos int) *Template {
	end := len(mt.data)
	for range maxBodyEnds {
		i := bytes.LastIndexByte(mt.data[pos:end], '<')
		if i < 0 {
			return nil
		}
		end = pos + i
		mt.caps = append(mt.caps, span{pos, end})
		if t := mt.walk(e.next, end); t != nil {
			return t
		}
		mt.caps = mt.caps[:len(mt.caps)-1]
	}
	return nil
}
