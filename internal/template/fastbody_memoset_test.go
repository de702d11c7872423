package template

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/wssgw/wssgw/internal/xmlscan"
)

// A teacher whose list is one level down (depth 3, the realistic mix's
// <Lines><Line>..</Line></Lines>): its items' record is a memo's deep
// record.
const (
	memoDeepItem    = `<r:L n="1" a="2"><r:S>sku</r:S><r:Q>3</r:Q></r:L>`
	memoDeepTeacher = memoOpen + `<r:H>head</r:H><r:Ls>` + memoDeepItem + memoDeepItem + memoDeepItem + `</r:Ls>` + memoClose
)

// TestFastBodyMemoSet: ok/... a template keeps a memo per first start
// tag, each taken by its own operation's messages, at most memoSet of
// them and memoSetBytes together; its deep records replay a message's
// first list item. fail/... a message that differs from the teacher in
// one byte anywhere in its first deep item gets the verdict and form of
// a template without a memo.
func TestFastBodyMemoSet(t *testing.T) {
	sc, err := xmlscan.NewScanner(xmlscan.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	op := func(i int) string {
		return fmt.Sprintf(`<r:Op%d xmlns:r="urn:r">`, i) + memoItem + memoItem + fmt.Sprintf(`</r:Op%d>`, i)
	}
	t.Run("ok/one memo per first tag", func(t *testing.T) {
		ctx := memoCtx(t, sc, nil)
		for i := range 3 {
			memoRun(sc, ctx, op(i), 0)
		}
		if n := memoLen(ctx.memo.Load()); n != 3 {
			t.Fatalf("%d memos, want 3", n)
		}
		for i := range 3 {
			ok, _, fb := memoRun(sc, ctx, op(i), 0)
			if !ok || !fb.memo.hit || !fb.memo.used {
				t.Fatalf("operation %d: handled %v, hit %v, record used %v", i, ok, fb.memo.hit, fb.memo.used)
			}
		}
	})
	t.Run("ok/bounded", func(t *testing.T) {
		ctx := memoCtx(t, sc, nil)
		for i := range 3 * memoSet {
			memoRun(sc, ctx, op(i), 0)
		}
		m := ctx.memo.Load()
		if n := memoLen(m); n != memoSet {
			t.Fatalf("%d memos, want %d", n, memoSet)
		}
		// Full: a new first tag replaces one in memoRepublish misses.
		for i := range memoRepublish {
			memoRun(sc, ctx, op(100+i), 0)
		}
		if m2 := ctx.memo.Load(); m2 == m || memoLen(m2) != memoSet || !strings.HasPrefix(string(m2.tag), "<r:Op1") {
			t.Fatalf("head %q, %d memos: not republished", m2.tag, memoLen(m2))
		}
		// Records of long names (fixed bytes, kept): without the byte
		// bound the set would hold about 16 x 5 of them.
		long := func(k int) string {
			n := fmt.Sprintf("r:N%d", k) + strings.Repeat("n", 200) // under the gate's name limit
			return `<` + n + `>t</` + n + `>`
		}
		ctx = memoCtx(t, sc, nil)
		for i := range 3 * memoSet {
			body := fmt.Sprintf(`<r:Op%d xmlns:r="urn:r">`, i)
			for k := range 5 {
				body += `<r:W>` + long(k) + long(k) + `</r:W>`
			}
			memoRun(sc, ctx, body+fmt.Sprintf(`</r:Op%d>`, i), 0)
		}
		size := 0
		for m := ctx.memo.Load(); m != nil; m = m.next {
			if len(m.deep) == 0 {
				t.Fatal("no deep record kept")
			}
			size += memoBytes(m)
		}
		if n := memoLen(ctx.memo.Load()); size > memoSetBytes || n < 2 {
			t.Fatalf("the set holds %d memos, %d bytes, bound %d", n, size, memoSetBytes)
		}
	})
	t.Run("ok/deep record", func(t *testing.T) {
		ctx := memoCtx(t, sc, nil)
		memoRun(sc, ctx, memoDeepTeacher, 0)
		if m := ctx.memo.Load(); m == nil || len(m.deep) != 1 || m.deep[0].depth != 3 {
			t.Fatalf("memo %+v", m)
		}
		student := memoOpen + `<r:H>other</r:H><r:Ls><r:L n="9" a="8"><r:S>x</r:S><r:Q>44</r:Q></r:L></r:Ls>` + memoClose
		for _, p := range fastPrefixLists {
			if fb := memoVersusFresh(t, sc, memoDeepTeacher, student, p); fb.rec.replayed != 1 {
				t.Fatalf("prefixes %v: %d replayed, want the first item", p, fb.rec.replayed)
			}
		}
	})
	t.Run("fail/deep context", func(t *testing.T) {
		for _, s := range []string{
			memoOpen + `<r:Ls xmlns:r="urn:x">` + memoDeepItem + `</r:Ls>` + memoClose,
			memoOpen + `<s:Ls xmlns:s="urn:r">` + memoDeepItem + `</s:Ls>` + memoClose,
			memoOpen + `<r:Ls><r:M>` + memoDeepItem + `</r:M></r:Ls>` + memoClose,
			memoOpen + memoDeepItem + memoClose,
		} {
			memoVersusFresh(t, sc, memoDeepTeacher, s, nil)
		}
		// A list under an element of another kind (2: the numbers
		// are this message's): not kept, since the student's kind 2 is
		// another namespace context (its items need xmlns="urn:y").
		teacher := memoOpen + `<Ls xmlns="urn:x"><L a="1">t</L><L a="1">t</L></Ls>` + memoClose
		student := memoOpen + `<s:Ls xmlns:s="urn:x" xmlns="urn:y"><L a="1">t</L></s:Ls>` + memoClose
		if fb := memoVersusFresh(t, sc, teacher, student, nil); fb.rec.replayed != 0 {
			t.Fatal("a record of kind 2 replayed in another message")
		}
	})
	handled := 0
	at := strings.Index(memoDeepTeacher, "<r:L ")
	for i := at; i <= at+len(memoDeepItem); i++ {
		for _, c := range []string{"X", "r", "\"", "<", ">", "/", " ", "=", ":", "&", "\t", "é"} {
			for _, s := range []string{
				memoDeepTeacher[:i] + c + memoDeepTeacher[i+1:],
				memoDeepTeacher[:i] + c + memoDeepTeacher[i:],
			} {
				if fb := memoVersusFresh(t, sc, memoDeepTeacher, s, nil); fb.rec.replayed > 0 {
					handled++
				}
			}
		}
		memoVersusFresh(t, sc, memoDeepTeacher, memoDeepTeacher[:i]+memoDeepTeacher[i+1:], nil)
	}
	if handled == 0 {
		t.Fatal("no edit left a record in use: the attack does not reach the deep record")
	}
}

// TestFastBodyMemoMixSize: the memos the realistic mix leaves on its
// templates stay within memoSetBytes, and their first tags hit.
func TestFastBodyMemoMixSize(t *testing.T) {
	bodies := mixBodies(t, 14, 200)
	lim := xmlscan.DefaultConfig().Limits
	fb := &fastBody{only: xmlscan.DefaultConfig().ElementOnly}
	type key struct {
		ctx *fastCtx
		tag string
	}
	seenTag := map[key]bool{}
	for i, mb := range bodies {
		if !fb.run(mb.data, mb.start, mb.end, mb.ctx, &lim, &bufHash{}) {
			t.Fatal("not handled")
		}
		k := key{mb.ctx, string(mb.data[mb.start : mb.start+bytes.IndexByte(mb.data[mb.start:], '>')+1])}
		if seenTag[k] && !fb.memo.hit {
			t.Fatalf("message %d: first tag %q seen before, memo missed", i, k.tag)
		}
		seenTag[k] = true
	}
	seen := map[*fastCtx]bool{}
	for _, mb := range bodies {
		if seen[mb.ctx] {
			continue
		}
		seen[mb.ctx] = true
		size, n := 0, 0
		for m := mb.ctx.memo.Load(); m != nil; m = m.next {
			size, n = size+memoBytes(m), n+1
		}
		t.Logf("a template's set: %d memos, %d bytes", n, size)
		if size > memoSetBytes {
			t.Fatalf("%d bytes", size)
		}
	}
}
