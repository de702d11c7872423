package template

import (
	"bytes"
	"hash/maphash"
)

// heads index a store's templates by the bytes they offer for aliasing
// (their regions' whole): templates with equal bytes there share equally
// with a new one, so learning compares the new template with one member
// of each class instead of every held template (issue 14: at the 1,000
// template cap a miss cost about 50 ms, all of it in that comparison). A
// partner's templates alias one head, so the classes are few. The key is
// a hash of both regions; a collision is told apart by comparing bytes.
type heads struct {
	seed    maphash.Seed
	classes map[uint64]*head
}

// head is one class: its templates' regions are equal byte for byte.
type head struct {
	c, x    []byte
	members map[*Template]struct{}
	any     *Template // a held member: any one shares as much
	next    *head     // another class with the same hash
}

func newHeads() *heads { return &heads{seed: maphash.MakeSeed(), classes: map[uint64]*head{}} }

func (hs *heads) key(t *Template) uint64 {
	var m maphash.Hash
	m.SetSeed(hs.seed)
	c, x := t.lits.c.whole(), t.lits.x.whole()
	m.Write(c)
	m.WriteByte(0)
	var n [8]byte
	for i := range n {
		n[i] = byte(len(c) >> (8 * i))
	}
	m.Write(n[:])
	m.Write(x)
	return m.Sum64()
}

// each calls f with one member of every class.
func (hs *heads) each(f func(*Template)) {
	for _, h := range hs.classes {
		for ; h != nil; h = h.next {
			f(h.any)
		}
	}
}

func (hs *heads) add(t *Template) {
	k := hs.key(t)
	c, x := t.lits.c.whole(), t.lits.x.whole()
	first := hs.classes[k]
	for h := first; h != nil; h = h.next {
		if bytes.Equal(h.c, c) && bytes.Equal(h.x, x) {
			h.members[t] = struct{}{}
			return
		}
	}
	hs.classes[k] = &head{c: c, x: x, members: map[*Template]struct{}{t: {}}, any: t, next: first}
}

func (hs *heads) remove(t *Template) {
	k := hs.key(t)
	c, x := t.lits.c.whole(), t.lits.x.whole()
	var prev *head
	for h := hs.classes[k]; h != nil; prev, h = h, h.next {
		if !bytes.Equal(h.c, c) || !bytes.Equal(h.x, x) {
			continue
		}
		delete(h.members, t)
		if len(h.members) > 0 {
			if h.any == t {
				for m := range h.members {
					h.any = m
					break
				}
			}
			return
		}
		switch {
		case prev != nil:
			prev.next = h.next
		case h.next != nil:
			hs.classes[k] = h.next
		default:
			delete(hs.classes, k)
		}
		return
	}
}
