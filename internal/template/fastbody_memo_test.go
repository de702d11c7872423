package template

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/wssgw/wssgw/internal/xmlscan"
)

// The memo's attack material (fastbody_memo.go): a teacher whose first
// start tag declares the list's prefix, and items the benchmark's way
// (attributes to reorder, a child with text).
const (
	memoOpen    = `<r:O xmlns:r="urn:r" z="1" a="2">`
	memoClose   = `</r:O>`
	memoItem    = `<r:I sku="S-1" qty="2"><r:N>note</r:N></r:I>`
	memoTeacher = memoOpen + memoItem + memoItem + memoItem + memoClose
	// memoFixed is memoItem's fixed segments, what a compiled record
	// keeps of it: its values and text are not copied.
	memoFixed = `<r:I sku="" qty=""><r:N></r:N></r:I>`
)

// memoCtx is a fresh fastCtx for fastHead's Body, its memo empty.
func memoCtx(t testing.TB, sc *xmlscan.Scanner, prefixes []string) *fastCtx {
	t.Helper()
	var ref xmlscan.Document
	if err := sc.Scan([]byte(fastHead+fastTail), &ref); err != nil {
		t.Fatal(err)
	}
	return newFastCtx(&ref, bodyOf(&ref), prefixes)
}

// memoRun runs the fast body on body with ctx as it is (its memo too):
// hashed (h), checked only, or with no byte after the content (short).
func memoRun(sc *xmlscan.Scanner, ctx *fastCtx, body string, mode int) (bool, []byte, *fastBody) {
	data := []byte(fastHead + body + fastTail)
	end := len(data) - len(fastTail)
	lim := sc.Limits()
	fb := &fastBody{only: xmlscan.DefaultConfig().ElementOnly}
	var h *bufHash
	switch mode {
	case 0:
		h = &bufHash{}
	case 2:
		h, data = &bufHash{}, data[:end:end]
	}
	var ok bool
	if h != nil {
		ok = fb.run(data, len(fastHead), end, ctx, &lim, h)
		return ok, h.Bytes(), fb
	}
	ok = fb.run(data, len(fastHead), end, ctx, &lim, nil)
	return ok, nil, fb
}

// memoVersusFresh teaches a template the teacher, then checks student
// with the teacher's memo against a template with none: the same verdict
// and canonical form, hashed, checked only and with no byte after the
// content. It returns the hashed run with the memo.
func memoVersusFresh(t *testing.T, sc *xmlscan.Scanner, teacher, student string, prefixes []string) *fastBody {
	t.Helper()
	ctx := memoCtx(t, sc, prefixes)
	memoRun(sc, ctx, teacher, 0)
	m := ctx.memo.Load()
	var first *fastBody
	for mode := range 3 {
		ctx.memo.Store(m) // the teacher's, not one a student published
		got, gotForm, fb := memoRun(sc, ctx, student, mode)
		want, wantForm, _ := memoRun(sc, memoCtx(t, sc, prefixes), student, mode)
		if got != want || !bytes.Equal(gotForm, wantForm) {
			t.Fatalf("taught %q, mode %d, %q: handled %v, form %q; without a memo: %v, %q", teacher, mode, student, got, gotForm, want, wantForm)
		}
		if mode == 0 {
			first = fb
		}
	}
	return first
}

// TestFastBodyMemo: ok/... a template's next message takes its first
// start tag and its first item from the memo, with the form a template
// without one gives; fail/... a second message that differs from the
// teacher in one byte, anywhere in the first tag or first item (changed,
// inserted, removed), gets the verdict and form of a template without a
// memo.
func TestFastBodyMemo(t *testing.T) {
	sc, err := xmlscan.NewScanner(xmlscan.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Run("ok/teacher published", func(t *testing.T) {
		ctx := memoCtx(t, sc, nil)
		data := []byte(fastHead + memoTeacher + fastTail)
		lim := sc.Limits()
		fb := &fastBody{only: xmlscan.DefaultConfig().ElementOnly}
		if !fb.run(data, len(fastHead), len(data)-len(fastTail), ctx, &lim, &bufHash{}) {
			t.Fatal("teacher not handled")
		}
		m := ctx.memo.Load()
		if m == nil || m.rec.kind != 1 || string(m.tag) != memoOpen || string(m.rec.prog.fixed) != memoFixed {
			t.Fatalf("memo %+v", m)
		}
		// Its own copy: the message's buffer reused changes nothing.
		for k := range data {
			data[k] = 'x'
		}
		fb2 := memoVersusFresh(t, sc, memoTeacher, memoTeacher, nil)
		if string(m.tag) != memoOpen || string(m.rec.prog.fixed) != memoFixed || !fb2.memo.used || fb2.rec.replayed != 3 {
			t.Fatal("the memo changed, or it is not used")
		}
	})
	t.Run("ok/large-items-not-kept", func(t *testing.T) {
		// A memo outlives the run: an item larger than memoMaxRecord
		// is not copied into it (the first tag still is).
		big := `<r:I sku="S-1" qty="2"><r:N>` + strings.Repeat("n", memoMaxRecord) + `</r:N></r:I>`
		ctx := memoCtx(t, sc, nil)
		data := []byte(fastHead + memoOpen + big + big + big + memoClose + fastTail)
		lim := sc.Limits()
		fb := &fastBody{only: xmlscan.DefaultConfig().ElementOnly}
		if !fb.run(data, len(fastHead), len(data)-len(fastTail), ctx, &lim, &bufHash{}) {
			t.Fatal("teacher not handled")
		}
		m := ctx.memo.Load()
		if m == nil || string(m.tag) != memoOpen || m.rec.kind != 0 || len(m.rec.prog.fixed) != 0 {
			t.Fatalf("memo kept a record of %d bytes", len(m.rec.prog.fixed))
		}
	})
	t.Run("ok/hit", func(t *testing.T) {
		student := memoOpen + memoItem + `<r:I sku="S-22" qty="17"><r:N>other note</r:N></r:I>` + strings.Repeat(memoItem, 3) + memoClose
		for _, p := range fastPrefixLists {
			fb := memoVersusFresh(t, sc, memoTeacher, student, p)
			if !fb.memo.hit || !fb.memo.used || fb.rec.replayed != 5 {
				t.Fatalf("prefixes %v: hit %v, record used %v, %d replayed, want all 5", p, fb.memo.hit, fb.memo.used, fb.rec.replayed)
			}
		}
	})
	handled := 0
	region := len(memoOpen) + len(memoItem) + 1
	for i := range region {
		for _, c := range []string{"X", "r", "\"", "'", "<", ">", "/", " ", "=", ":", "&", "\r", "\t", "é", "\x00"} {
			for _, s := range []string{
				memoTeacher[:i] + c + memoTeacher[i+1:], // changed
				memoTeacher[:i] + c + memoTeacher[i:],   // inserted
			} {
				if fb := memoVersusFresh(t, sc, memoTeacher, s, nil); fb.memo.used {
					handled++
				}
			}
		}
		memoVersusFresh(t, sc, memoTeacher, memoTeacher[:i]+memoTeacher[i+1:], nil) // removed
	}
	if handled == 0 {
		t.Fatal("no edit left the record in use: the attack does not reach it")
	}
	// The replay suites' bodies, taught by themselves and under the
	// teacher's first tag.
	for _, b := range append(fastReplaySeeds(), fastSeeds...) {
		memoVersusFresh(t, sc, b, b, nil)
		memoVersusFresh(t, sc, memoTeacher, memoOpen+b+memoClose, nil)
		memoVersusFresh(t, sc, memoOpen+b+memoClose, memoTeacher, nil)
	}
}

// TestFastBodyMemoContext: fail/... the memo's record is not used where
// its namespace context (in-scope and rendered bindings, parent kind,
// depth) or the limits differ from the teacher's; the verdict and form
// are those of a template without a memo.
func TestFastBodyMemoContext(t *testing.T) {
	sc, err := xmlscan.NewScanner(xmlscan.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	items := memoItem + memoItem
	for _, c := range []struct {
		name, body string
		hit        bool // the first tag is the memo's
	}{
		{"fail/deeper", memoOpen + `<r:W>` + items + `</r:W>` + memoClose, true},
		{"fail/other prefix", memoOpen + `<s:I xmlns:s="urn:r" sku="S-1" qty="2"><s:N>note</s:N></s:I>` + memoClose, true},
		{"fail/prefix rebound", memoOpen + `<r:I xmlns:r="urn:x" sku="S-1" qty="2"><r:N>note</r:N></r:I>` + memoClose, true},
		{"fail/second element", memoOpen + memoClose + memoOpen + items + memoClose, true},
		{"fail/other uri", `<r:O xmlns:r="urn:x" z="1" a="2">` + items + memoClose, false},
		{"fail/default namespace", `<r:O xmlns:r="urn:r" xmlns="urn:d" z="1" a="2">` + items + memoClose, false},
		{"fail/unprefixed", `<O z="1" a="2">` + strings.ReplaceAll(items, "r:", "") + `</O>`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			fb := memoVersusFresh(t, sc, memoTeacher, c.body, nil)
			if fb.memo.hit != c.hit || fb.memo.used {
				t.Fatalf("hit %v (want %v), record used %v", fb.memo.hit, c.hit, fb.memo.used)
			}
		})
	}
	t.Run("fail/other template", func(t *testing.T) {
		a, b := memoCtx(t, sc, nil), memoCtx(t, sc, []string{"r"})
		memoRun(sc, a, memoTeacher, 0)
		if a.memo.Load() == nil || b.memo.Load() != nil {
			t.Fatal("a memo is per template")
		}
	})
	t.Run("fail/other limits", func(t *testing.T) {
		ctx := memoCtx(t, sc, nil)
		memoRun(sc, ctx, memoTeacher, 0)
		tight := tightScanner(t)
		_, _, fb := memoRun(tight, ctx, memoTeacher, 0)
		if fb.memo.m != nil || fb.memo.hit {
			t.Fatal("a memo learnt under other limits was used")
		}
	})
	t.Run("fail/other element-only names", func(t *testing.T) {
		ctx := memoCtx(t, sc, nil)
		memoRun(sc, ctx, memoTeacher, 0)
		data := []byte(fastHead + memoTeacher + fastTail)
		lim := sc.Limits()
		fb := &fastBody{only: []xmlscan.Name{{Space: "urn:r", Local: "I"}}}
		if fb.run(data, len(fastHead), len(data)-len(fastTail), ctx, &lim, &bufHash{}) || fb.memo.m != nil {
			t.Fatal("a memo learnt with other ElementOnly names was used")
		}
	})
}

// TestFastBodyMemoRace: runs on one template, concurrently, of bodies
// that hit the memo, miss its record or its first tag (and republish
// it), each giving the form of a template without a memo; a published
// memo is never written (-race).
func TestFastBodyMemoRace(t *testing.T) {
	sc, err := xmlscan.NewScanner(xmlscan.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	bodies := []string{
		memoTeacher,
		memoOpen + strings.Repeat(`<r:I sku="S-9" qty="99"><r:N>n2</r:N></r:I>`, 4) + memoClose,
		memoOpen + strings.Repeat(`<r:J b="1" a="2">t</r:J>`, 5) + memoClose,
		`<r:O xmlns:r="urn:r">` + strings.Repeat(memoItem, 3) + memoClose,
	}
	want := make([][]byte, len(bodies))
	for k, b := range bodies {
		ok, form, _ := memoRun(sc, memoCtx(t, sc, nil), b, 0)
		if !ok {
			t.Fatalf("%q not handled", b)
		}
		want[k] = form
	}
	ctx := memoCtx(t, sc, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 300 {
				k := (g + i) % len(bodies)
				if g%2 == 1 {
					k = (g + i/7) % len(bodies)
				}
				if ok, form, _ := memoRun(sc, ctx, bodies[k], 0); !ok || !bytes.Equal(form, want[k]) {
					errs <- fmt.Errorf("%q: handled %v, form %q, want %q", bodies[k], ok, form, want[k])
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if ctx.misses.Load() < memoRepublish {
		t.Fatalf("%d misses: the memo was not republished", ctx.misses.Load())
	}
}
