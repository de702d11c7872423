package template

import "slices"

// A partner's templates differ in their payloads but repeat the Security
// header byte for byte, and with it the canonical forms of the SignedInfo
// and the Timestamp. When a template is stored, the longest prefixes of
// its literal regions equal to a held template's become aliases of that
// template's bytes, and its canonical forms equal to that template's
// become aliases too: the header is held once per store, as in the
// paper's automaton, where a template cost about 4 KB for this reason.

// shareWith aliases t's literals and canonical forms to the held template
// that shares the most bytes with it. t is not yet published. Which
// template that is depends on a held template only through the bytes it
// offers for aliasing (its regions' whole), so it looks at one member of
// each class of equal bytes (issue 14: comparing with every held template
// made learning linear in the templates held).
func shareWith(t *Template, held *heads) {
	var best *Template
	bestC, bestX := 0, 0
	st := straddlesOf(t)
	held.each(func(o *Template) {
		c, x := commonHead(t, o, st)
		if c+x > bestC+bestX {
			best, bestC, bestX = o, c, x
		}
	})
	if best == nil {
		return
	}
	t.lits.c.alias(best.lits.c.whole(), bestC)
	t.lits.x.alias(best.lits.x.whole(), bestX)
	aliasEqual(&t.slots, best.slots)
	aliasEqual(&t.frags, best.frags)
	aliasEqual(&t.algs, best.algs)
	t.size = t.estimate(sharePieces(t, best))
}

// commonHead returns how many leading bytes of t's constant and extra
// regions can alias o's: equal bytes, in one of o's buffers, ending a
// fragment (constants) and straddled by no literal piece of t.
func commonHead(t, o *Template, st *straddles) (c, x int) {
	n := commonPrefix(t.lits.c.own, o.lits.c.whole())
	k, _ := slices.BinarySearch(t.ends, uint32(n+1)) // fragments ending by n
	for ; k > 0; k-- {
		if c = int(t.ends[k-1]); !st.c.spans(c) {
			break
		}
	}
	if k == 0 {
		c = 0
	}
	for x = commonPrefix(t.lits.x.own, o.lits.x.whole()); x > 0 && st.x.spans(x); x-- {
	}
	return c, x
}

// straddles are the spans of t's literal pieces in each region, so that
// whether one spans an offset costs a binary search rather than a walk
// over every canonical form (done once per held class when learning).
type straddles struct{ c, x spans }

// spans are open intervals (from, to) sorted by from, with reach[i] the
// largest to among the first i+1.
type spans struct{ from, reach []int }

func straddlesOf(t *Template) *straddles {
	var cs, xs [][2]int
	t.eachPieces(func(ps []piece) {
		for _, p := range ps {
			if p.n == 0 {
				continue
			}
			off := int(p.off &^ xBit)
			if p.off&xBit != 0 {
				xs = append(xs, [2]int{off, off + int(p.n)})
			} else {
				cs = append(cs, [2]int{off, off + int(p.n)})
			}
		}
	})
	return &straddles{c: spansOf(cs), x: spansOf(xs)}
}

func spansOf(iv [][2]int) spans {
	slices.SortFunc(iv, func(a, b [2]int) int { return a[0] - b[0] })
	s := spans{from: make([]int, len(iv)), reach: make([]int, len(iv))}
	r := 0
	for i, v := range iv {
		r = max(r, v[1])
		s.from[i], s.reach[i] = v[0], r
	}
	return s
}

// spans reports whether an interval has from < n < to.
func (s spans) spans(n int) bool {
	i, _ := slices.BinarySearch(s.from, n) // intervals with from < n
	return i > 0 && s.reach[i-1] > n
}

// sharePieces aliases those of t's canonical forms that are equal to o's
// and whose literals all lie in the aliased heads: the same pieces then
// name the same bytes.
func sharePieces(t, o *Template) (aliased int) {
	for i, s := range t.steps {
		if s.sig == nil || i >= len(o.steps) || o.steps[i].sig == nil {
			continue
		}
		os := o.steps[i].sig
		aliased += alias(t, &s.sig.signedInfo, os.signedInfo)
		for j := range s.sig.refs {
			if j < len(os.refs) {
				aliased += alias(t, &s.sig.refs[j].canon, os.refs[j].canon)
			}
		}
	}
	return aliased
}

// alias points *mine at theirs when that is safe and returns how many
// pieces that saved.
func alias(t *Template, mine *[]piece, theirs []piece) int {
	if !slices.Equal(*mine, theirs) {
		return 0
	}
	for _, p := range *mine {
		if p.n > 0 && !t.lits.shared(p.off, uint32(p.n)) {
			return 0
		}
	}
	*mine = theirs
	return len(theirs)
}

// aliasEqual points *mine at theirs when they are equal: immutable once
// learned, they can be shared.
func aliasEqual[T comparable](mine *[]T, theirs []T) {
	if slices.Equal(*mine, theirs) {
		*mine = theirs
	}
}

// eachPieces calls f with each of t's canonical forms.
func (t *Template) eachPieces(f func([]piece)) {
	for _, s := range t.steps {
		if s.sig != nil {
			f(s.sig.signedInfo)
			for _, r := range s.sig.refs {
				f(r.canon)
			}
		}
	}
}

// estimate is the memory t holds on its own: its unshared bytes and
// exemplar, per slot its end and class, its canonical forms less the
// aliased pieces, and the fixed structures. Shared heads are counted by
// the template they were first learned for.
func (t *Template) estimate(aliased int) int {
	n := len(t.lits.c.own) + len(t.lits.x.own) + len(t.exemplarValues) + 4*len(t.ends) + 5*len(t.slots) + 512
	t.eachPieces(func(ps []piece) { n += 8 * len(ps) })
	n += t.midBytes()
	return n - 8*aliased
}
