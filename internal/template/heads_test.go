package template

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/signer"
)

// TestHeadsIndex checks the index learning compares with (issue 14): after
// learning and evicting, it holds exactly the store's templates, and the
// most a new template shares with one member per class is the most it
// shares with any held template.
func TestHeadsIndex(t *testing.T) {
	o := testOptions()
	o.MaxTemplates = 5
	f := newFixture(t, nil, o)
	msgs := f.shapes(t, 8)
	// Another stack's header: a second class.
	msgs = append(msgs, f.sign(t, benchEnvelope(3, "Other"), f.ec, signer.RefBST, f.now, nil))
	for i, m := range msgs {
		_, err := f.engine.Process(m, f.policy, f.now)
		require.NoError(t, err)
		t.Run(fmt.Sprintf("ok/after-%d", i), func(t *testing.T) {
			s := f.store
			n := 0
			s.heads.each(func(rep *Template) {
				require.Same(t, s.byID[rep.ID], rep, "a class's member is held")
			})
			for _, h := range s.heads.classes {
				for ; h != nil; h = h.next {
					require.NotEmpty(t, h.members, "an empty class is dropped")
					for m := range h.members {
						require.Same(t, s.byID[m.ID], m)
						n++
					}
				}
			}
			assert.Equal(t, len(s.byID), n, "every held template in one class")
		})
	}
	fresh := f.sign(t, benchEnvelope(2, "Fresh"), f.rsa, signer.RefBST, f.now, nil)
	res, err := f.dom.Process(fresh, f.policy, f.now)
	require.NoError(t, err)
	nt, err := f.engine.newTemplate(fresh, nil, res, f.policy, f.now)
	require.NoError(t, err)
	st := straddlesOf(nt)
	all, byClass := 0, 0
	for _, o := range f.store.byID {
		c, x := commonHead(nt, o, st)
		all = max(all, c+x)
	}
	f.store.heads.each(func(o *Template) {
		c, x := commonHead(nt, o, st)
		byClass = max(byClass, c+x)
	})
	assert.Positive(t, all, "the fresh template shares the Security header")
	assert.Equal(t, all, byClass)
}

// TestStraddles checks the binary-searched spans against the walk over
// every canonical form they replace.
func TestStraddles(t *testing.T) {
	f := newFixture(t, nil, testOptions())
	tpl := f.learnShape(t, "Item")
	st := straddlesOf(tpl)
	walk := func(n int64) bool {
		found := false
		tpl.eachPieces(func(ps []piece) {
			for _, p := range ps {
				if p.n > 0 && p.off&xBit == uint32(n)&xBit && int64(p.off) < n && int64(p.off)+int64(p.n) > n {
					found = true
				}
			}
		})
		return found
	}
	some := 0
	for n := range len(tpl.lits.c.whole()) + len(tpl.lits.c.own) + 1 {
		require.Equal(t, walk(int64(n)), st.c.spans(n), "c offset %d", n)
		if walk(int64(n)) {
			some++
		}
	}
	for n := range len(tpl.lits.x.own) + 1 {
		require.Equal(t, walk(xBit|int64(n)), st.x.spans(n), "x offset %d", n)
	}
	assert.Positive(t, some, "some offsets are straddled")
}
