package template

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/wssgw/wssgw/bench/proc"
	"github.com/wssgw/wssgw/internal/c14n"
	wcrypto "github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/testpki"
	"github.com/wssgw/wssgw/internal/testtraffic"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// mixBody is one message of the realistic mix as the fast body sees it:
// the Body content data[start:end] under its template's context, and
// what the Body's canonical form is (exclusive C14N with the Body
// Reference's PrefixList, as the signer made it).
type mixBody struct {
	data       []byte
	start, end int
	ctx        *fastCtx
	canon      []byte   // the canonical Body, start and end tags included
	want       [32]byte // SHA-256 of the canonical content alone
	class      int
}

// mixClasses are the size classes of the mix's bodies, reported apart:
// the mix is mostly small bodies with a long tail (testtraffic's list
// lengths).
var mixClasses = []struct {
	name string
	max  int // content bytes below this
}{{"lt1KiB", 1 << 10}, {"lt4KiB", 4 << 10}, {"lt16KiB", 16 << 10}, {"ge16KiB", math.MaxInt}}

// mixBodies makes n messages of the mix (testtraffic's default mix,
// seeded, signed at a fixed time) and their Bodies: one fastCtx per
// partner stack, as the template store has one template per stack's
// envelope, shared by every operation's messages (the memo too).
func mixBodies(b testing.TB, seed uint64, n int) []mixBody {
	b.Helper()
	ca := testpki.NewCA(b, "mix CA")
	leaf := ca.IssueRSA(b, b.TempDir(), "partner")
	g := testtraffic.New(seed, &wcrypto.KeyPair{Signer: leaf.Key, Certificate: leaf.Cert}, func() time.Time { return time.Unix(1.8e9, 0) })
	ctxs := map[string]*fastCtx{}
	out := make([]mixBody, 0, n)
	for range n {
		m, err := g.Next()
		if err != nil {
			b.Fatal(err)
		}
		var d xmlscan.Document
		if err := xmlscan.Scan(m.Signed, &d); err != nil {
			b.Fatal(err)
		}
		bi := bodyOf(&d)
		prefixes := bodyPrefixes(b, m.Signed, &d, bi)
		ctx := ctxs[m.Stack]
		if ctx == nil {
			ctx = newFastCtx(&d, bi, prefixes)
			ctxs[m.Stack] = ctx
		}
		e := &d.Elements[bi]
		canon, err := c14n.Canonicalize(c14n.AlgExcC14N, &d, bi, prefixes, nil)
		if err != nil {
			b.Fatal(err)
		}
		mb := mixBody{data: m.Signed, start: e.StartEnd, end: e.EndStart, ctx: ctx, canon: canon}
		inner := canon[bytes.IndexByte(canon, '>')+1 : bytes.LastIndex(canon, []byte("</"))]
		mb.want = sha256.Sum256(inner)
		for mb.end-mb.start >= mixClasses[mb.class].max {
			mb.class++
		}
		out = append(out, mb)
	}
	return out
}

// bodyPrefixes is the PrefixList of the Reference to the Body bi (nil:
// none), read from the signed bytes.
func bodyPrefixes(b testing.TB, msg []byte, d *xmlscan.Document, bi int) []string {
	b.Helper()
	for _, a := range d.AttrsOf(bi) {
		if a.Local != "Id" {
			continue
		}
		at := bytes.Index(msg, []byte(`URI="#`+string(msg[a.Value.Start:a.Value.End])+`"`))
		if at < 0 {
			b.Fatal("no Reference to the Body")
		}
		ref := msg[at : at+bytes.Index(msg[at:], []byte("</ds:Reference>"))]
		const pl = `PrefixList="`
		k := bytes.Index(ref, []byte(pl))
		if k < 0 {
			return nil
		}
		v := ref[k+len(pl):]
		return strings.Fields(string(v[:bytes.IndexByte(v, '"')]))
	}
	b.Fatal("Body without an Id")
	return nil
}

// BenchmarkFastBodyMix times the fast body pass over the Bodies of the
// realistic mix (issue 14: "measure on realistic work, not one repeated
// message"): 300 messages of testtraffic's default mix, a dozen
// operations, lists of 0-100 items, optional elements, escaped and
// non-ASCII text, two partner stacks, each message's digest checked
// against exclusive C14N's. Each round runs the pass over every message of
// a size class, then SHA-256 alone over the same canonical bytes, and
// reports the CPU ratio per class and over all:
//
//	go test -run '^$' -bench FastBodyMix ./internal/template
func BenchmarkFastBodyMix(b *testing.B) {
	bodies := mixBodies(b, 14, 300)
	lim := xmlscan.DefaultConfig().Limits
	fb := &fastBody{only: xmlscan.DefaultConfig().ElementOnly}
	h := sha256.New()
	total := 0
	byClass := make([][]*mixBody, len(mixClasses))
	for i := range bodies {
		mb := &bodies[i]
		total += mb.end - mb.start
		byClass[mb.class] = append(byClass[mb.class], mb)
	}
	sums := make([][32]byte, len(bodies))
	cFast, cHash := make([]time.Duration, len(mixClasses)), make([]time.Duration, len(mixClasses))
	replayed, elems, memoHits := 0, 0, 0 // subtrees replayed, elements, first tags the memo took
	b.ReportAllocs()
	b.SetBytes(int64(total))
	for b.Loop() {
		for c, set := range byClass {
			c0 := proc.SelfCPU()
			for k, mb := range set {
				h.Reset()
				if !fb.run(mb.data, mb.start, mb.end, mb.ctx, &lim, h) {
					b.Fatalf("message %d not handled", k)
				}
				h.Sum(sums[k][:0])
				replayed += fb.rec.replayed
				if fb.memo.hit {
					memoHits++
				}
				elems += fb.elems - mb.ctx.elements
			}
			c1 := proc.SelfCPU()
			for _, mb := range set {
				h.Reset()
				h.Write(mb.canon)
				h.Sum(nil)
			}
			cFast[c] += c1 - c0
			cHash[c] += proc.SelfCPU() - c1
			for k, mb := range set {
				if sums[k] != mb.want {
					b.Fatalf("class %s message %d: digest differs from exclusive C14N's", mixClasses[c].name, k)
				}
			}
		}
	}
	var f, s time.Duration
	for c := range mixClasses {
		f, s = f+cFast[c], s+cHash[c]
		if len(byClass[c]) > 0 && cHash[c] > 0 {
			b.ReportMetric(float64(cFast[c])/float64(cHash[c]), fmt.Sprintf("cpu-fast/sha256-%s(%d)", mixClasses[c].name, len(byClass[c])))
		}
	}
	b.ReportMetric(float64(f)/float64(s), "cpu-fast/sha256")
	// How much of the mix the sibling replay takes (deterministic).
	b.ReportMetric(float64(replayed)/float64(b.N*len(bodies)), "replays/msg")
	b.ReportMetric(float64(elems)/float64(b.N*len(bodies)), "elements/msg")
	b.ReportMetric(float64(memoHits)/float64(b.N*len(bodies)), "memo-hits/msg")
}
