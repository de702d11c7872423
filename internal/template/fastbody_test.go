package template

import (
	"bytes"
	"crypto/sha256"
	"hash"
	"strings"
	"testing"
	"time"

	"github.com/wssgw/wssgw/bench/proc"
	"github.com/wssgw/wssgw/internal/c14n"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// bufHash collects what is written to it: the fast body's canonical
// output, to compare with c14n's.
type bufHash struct{ bytes.Buffer }

func (b *bufHash) Sum(p []byte) []byte { return append(p, b.Bytes()...) }
func (b *bufHash) Size() int           { return 0 }
func (b *bufHash) BlockSize() int      { return 1 }

const (
	fastHead = `<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns:m="urn:m" xmlns="urn:default"><soap:Header/><soap:Body xmlns:q="urn:q">`
	fastTail = `</soap:Body></soap:Envelope>`
)

// fastVersusGate checks the fast body on one Body content against the
// gate and c14n: whatever the fast body accepts, the gate accepts, with a
// content genericContent accepts and the same canonical form as c14n's
// walk over the gate's Document.
func fastVersusGate(t *testing.T, sc *xmlscan.Scanner, body string, prefixes []string) (handled bool) {
	t.Helper()
	var ref xmlscan.Document
	if err := sc.Scan([]byte(fastHead+fastTail), &ref); err != nil {
		t.Fatal(err)
	}
	ctx := newFastCtx(&ref, bodyOf(&ref), prefixes)
	data := []byte(fastHead + body + fastTail)
	lim := sc.Limits()
	fb := &fastBody{only: xmlscan.DefaultConfig().ElementOnly}
	h := &bufHash{}
	end := len(data) - len(fastTail)
	ok := fb.run(data, len(fastHead), end, ctx, &lim, h)
	// The bytes after the content change nothing: with none there (the
	// word compares and copies near the end of data take their short
	// paths) the verdict and the form are the same.
	short := &bufHash{}
	if ok2 := (&fastBody{only: fb.only}).run(data[:end:end], len(fastHead), end, ctx, &lim, short); ok2 != ok || ok && !bytes.Equal(short.Bytes(), h.Bytes()) {
		t.Fatalf("%q: without the bytes after the content: handled %v, form %q; with them: %v, %q", body, ok2, short.Bytes(), ok, h.Bytes())
	}
	// Checked without a digest (a Body no Reference covers), the verdict
	// is the same: the replay and the sibling kernel then write nothing.
	if ok3 := (&fastBody{only: fb.only}).run(data, len(fastHead), end, ctx, &lim, nil); ok3 != ok {
		t.Fatalf("%q: checked only: handled %v, with the digest %v", body, ok3, ok)
	}
	// Into SHA-NI's digest (fastDigest), which the sibling kernel hashes
	// as it goes, after a few bytes already written (a midstate's,
	// SignedInfo's...): the same verdict, and the digest of the same
	// bytes.
	if haveSHANI {
		pre := bytes.Repeat([]byte{'p'}, len(body)%67)
		d := &shaNI{}
		d.Reset()
		d.Write(pre)
		if ok4 := (&fastBody{only: fb.only}).run(data, len(fastHead), end, ctx, &lim, d); ok4 != ok {
			t.Fatalf("%q: into SHA-NI's digest: handled %v, else %v", body, ok4, ok)
		} else if want := sha256.Sum256(append(pre, h.Bytes()...)); ok && !bytes.Equal(d.Sum(nil), want[:]) {
			t.Fatalf("%q: SHA-NI's digest is not SHA-256 of the canonical form", body)
		}
	}
	if !ok {
		return false
	}
	var d xmlscan.Document
	if err := sc.Scan(data, &d); err != nil {
		t.Fatalf("the fast body accepted %q, the gate refused it: %v", body, err)
	}
	b := bodyOf(&d)
	if b < 0 || !genericContent(&d, b, notPlain, false) {
		t.Fatalf("the fast body accepted %q, genericContent refused it", body)
	}
	want, err := c14n.Canonicalize(c14n.AlgExcC14N, &d, b, prefixes, nil)
	if err != nil {
		t.Fatalf("the fast body accepted %q, c14n refused it: %v", body, err)
	}
	var fb2 fastBody
	fb2.scope = ctx.scope
	start := bytes.IndexByte(want, '>') + 1
	got := h.Bytes()
	if inner := want[start : len(want)-len("</soap:Body>")]; !bytes.Equal(inner, got) {
		t.Fatalf("canonical forms differ for %q (prefixes %v):\nc14n: %s\nfast: %s", body, prefixes, inner, got)
	}
	return true
}

var fastSeeds = []string{
	``, `<T xmlns="urn:example:svc2:v1"><R no="1">x</R></T>`, `text`, `  <a/>  `, `<m:a x="1" b="2" m:c="3"/>`, `<a xmlns="">x</a>`, `<x:a xmlns:x="urn:x"><x:b/><y:c xmlns:y="urn:x"/></x:a>`,
	`<m:a xmlns:m="urn:other"><m:b/></m:a>`, `<a  b = '1'  c="x&amp;y&lt;&gt;&quot;&apos;&#x41;&#10;&#9;&#13;" >t</a >`,
	"<a b=\"x\ty\nz\">\t\n</a>", `<a>&amp;&lt;&gt;&#x3e;&#62;&#13;]]</a>`, `<a>]]></a>`, `<a b="'">'"</a>`, `<a b='"'/>`,
	`<q:a q:z="1" m:y="2" a="3" xml:lang="de"/>`, `<a><!-- c --></a>`, `<a><![CDATA[x]]></a>`, `<?pi x?>`, "<a>\r\n</a>",
	`<a Id="x"/>`, `<a xml:id="x"/>`, `<ds:a xmlns:ds="http://www.w3.org/2000/09/xmldsig#"/>`, `<a b="1" b="2"/>`,
	`<a m:b="1" x:b="2" xmlns:x="urn:m"/>`, `<a xmlns:x="rel"/>`, `<a xmlns:x=""/>`, `<a></b>`, `<a>`, `</a>`, `<a b="1"c="2"/>`,
	`<soap:Header/>`, `<a>grüße – 日本</a>`, `<a b="ü"/>`, `<x:a/>`, `<1a/>`, `<a:1/>`, `<a:/>`, `<:a/>`, `<a>&foo;</a>`, `<a>&#0;</a>`,
	`<a xmlns:xml="http://www.w3.org/XML/1998/namespace"/>`, `<a xmlns="urn:default"><b xmlns="urn:other"><c xmlns="urn:default"/></b></a>`,
	`<x:a xmlns:x="urn:x"><x:a xmlns:x="urn:y"><x:a xmlns:x="urn:x"/></x:a></x:a>`, `<a><b><c><d/></c></b></a>tail`, "\x01", `<a>&#xFFFE;</a>`,
	`<q:a xmlns:q="urn:q2" xmlns:m="urn:m"/>`, `<a xmlns:m="urn:m2" m:x="1"/>`,
	// simpleTag's kind (children of an element of the same prefix) and
	// its near misses.
	`<m:a><m:b z="1" a="2" m="3"/><m:c y="2" x="1">t</m:c><m:d Id="x"/></m:a>`, `<a><b c="1" c="1"/></a>`,
	`<a><b c="1"  d="2"/></a>`, `<a><b d="1" c="x&amp;"/></a>`, `<a><b xmlns="urn:x" c="1"/></a>`, `<a><b c="1" b="2" a="3" /></a>`,
	`<a><b c='1'/></a>`, `<a><b h="1" g="2" f="3" e="4" d="5" c="6" b="7" a="8" _="9"/></a>`, `<a><xmlns/></a>`, `<a><b xml:lang="x" c="1"/></a>`,
}

// fastEdgeSeeds put what the block scan stops at (fastbody_scan.go) at
// the edges of its 64-byte blocks, in text and in attribute values, and
// exercise the shapes simpleTag remembers: repeated siblings, then ones
// that differ in a way the shape must notice.
func fastEdgeSeeds() []string {
	specials := []string{"&amp;", "&#x3E;", ">", "]]>", "\r", "\x01", "\x7f", "\"", "'", "é", "日", "\U0001F600", "\xff", "\xe6\x97", "\t", "\n", "<", "&"}
	var s []string
	for _, k := range []int{0, 1, 6, 7, 8, 15, 16, 31, 32, 62, 63, 64, 65, 127, 128} {
		pad := strings.Repeat("x", k)
		for _, c := range specials {
			s = append(s, pad+c+"<a/>", "<a>"+pad+c+"</a>", "<a><b>"+pad+c+"</b></a>", "<a><b/><b>"+pad+"</b>"+c+"</a>", `<a><b c="`+pad+c+`"/></a>`, "<a><b c='"+pad+c+"'/></a>", `<a><b c="`+pad+`" d="`+c+`">`+c+`</b></a>`)
		}
	}
	item := `<m:Item sku="S-1" qty="2"><m:Note>n</m:Note></m:Item>`
	s = append(s,
		`<m:O>`+item+item+item+`</m:O>`,
		`<m:O>`+item+`<m:Item sku="S-1&amp;" qty="2"><m:Note>n</m:Note></m:Item></m:O>`,
		`<m:O>`+item+`<m:Item sku="S-1" qty="2" z="3"><m:Note/></m:Item></m:O>`,
		`<m:O>`+item+`<m:Item sku="S-1"><m:Note/></m:Item></m:O>`,
		`<m:O>`+item+`<m:Item sku="S-1" qty="2" qty="3"/></m:O>`,
		`<m:O>`+item+`<m:Item sku="S-1" Id="2"/></m:O>`,
		`<m:O>`+item+`<m:Items sku="S-1" qty="2"/><m:Item  sku="1" qty="2"/><m:Item sku="1" qty="2" /></m:O>`,
		`<m:O>`+item+`<m:Item skux="S-1" qty="2"/><m:Item sku="1"qty="2"/><m:Item sku='1' qty="2"/></m:O>`,
		`<x:a xmlns:x="urn:1"><x:b c="1"/><x:b c="2"/></x:a><x:a xmlns:x="urn:2"><x:b c="1"/><x:b c="1" c="2"/></x:a>`,
		`<x:a xmlns:x="urn:1"><x:b c="1"/></x:a><x:a xmlns:x="http://www.w3.org/2000/09/xmldsig#"><x:b c="1"/></x:a>`,
		`<a><b c="1"/></a><a xmlns="http://www.w3.org/2000/09/xmldsig#"><b c="1"/></a>`,
		`<m:a><m:abcdefghijk longattribute="1" b="2"/><m:abcdefghijk longattribute="1" b="2"/><m:abcdefghijkl longattribute="1" b="2"/></m:a>`,
		`<a><b z="1" y="2" x="3"/><b z="1" y="2" x="3"/><b z="1" y="2" x="3"></b><b z="1" y="2" x="&#x9;"/></a>`,
		`<a><b/><b/></a><c><b/></c>`, `<a><b>x</c></a>`, `<a><b>x</bb></a>`, `<a><bb>x</b></a>`, `<a><b>x</b ></a>`, `<a><b></b><b>x</b><b>x</b></a>`,
		`<a><b>x</b`, `<a><b>x</`, `<a><b>x<`, `<a><b>]]></b></a>`, `<a><b><c>x</c></b></a>`, `<m:a><m:b>x</m:b><m:b>y</m:c></m:a>`, `<m:O><m:I a="1"/></m:O><q:P><m:I a="1"/></q:P>`, `<m:O><m:I a="1"/></m:O><P><m:I a="1"/></P>`,
		"<a><b c=\"1\"></b><b c=\"x\t>y\">z</b></a>", "<a><b c=\"1\" d=\"2\"></b><b c=\"x\n>y\" d=\"2\">z</b></a>",
		"<a><b c=\"1\"/><b c=\"x\t\"/></a>", `<a><b c="1"/><b c="x&amp;>y">z</b></a>`, `<a><b c="1"/><b c="x&lt;"/></a>`,
		`<a xmlns="urn:x"><b c="1"/></a><a xmlns="urn:y"><b c="1"/></a>`, `<x:a xmlns:x="urn:x"><x:b c="1"/></x:a><x:a xmlns:x="urn:y"><x:b c="1"/></x:a>`, `<a><b>`+strings.Repeat("y", 70)+`</b><b>t</b ></a>`,
	)
	return s
}

var fastPrefixLists = [][]string{nil, {"#default"}, {"m", "q"}, {"#default", "m", "q", "x"}}

// tightScanner gates with limits the seeds reach, so that the fast body's
// limit checks meet the gate's.
func tightScanner(t testing.TB) *xmlscan.Scanner {
	c := xmlscan.DefaultConfig()
	c.Limits = xmlscan.Limits{MaxDepth: 4, MaxElements: 7, MaxAttrs: 2, MaxNameLen: 13, MaxNSDeclsPerElement: 3,
		MaxNSDecls: 6, MaxTextLen: 6, MaxAttrValueLen: 41}
	sc, err := xmlscan.NewScanner(c)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

var fastLimitSeeds = []string{
	`<a><b><c/></b></a>`, `<a><b><c><d/></c></b></a>`, `<a/><b/><c/><d/>`, `<a/><b/><c/><d/><e/>`, `<a x="1" y="2"/>`, `<a x="1" y="2" z="3"/>`,
	`<abcdefghijklm/>`, `<abcdefghijklmn/>`, `<a xmlns:x="urn:x"/>`, `<a xmlns:x="urn:x" xmlns:y="urn:y"/>`, `<a>123456</a>`, `<a>1234567</a>`,
	`12<a/>3456`, `12<a/>34567`, `<a>&#x41;&#x41;</a>`,
	`<a><b>123456</b></a>`, `<a><b>1234567</b></a>`, `<a><b/><b>1234567</b></a>`,
}

// TestFastBodyVersusGate: ok/... contents the fast body handles give the
// gate's verdict and c14n's canonical form; the others (fail/...) are
// left to the Document path.
func TestFastBodyVersusGate(t *testing.T) {
	sc, err := xmlscan.NewScanner(xmlscan.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	handled := 0
	for _, body := range fastSeeds {
		for _, p := range fastPrefixLists {
			if fastVersusGate(t, sc, body, p) {
				handled++
			}
		}
	}
	tight := tightScanner(t)
	tightHandled := 0
	for _, body := range append(fastLimitSeeds, fastSeeds...) {
		if fastVersusGate(t, tight, body, nil) {
			tightHandled++
		}
	}
	edge := 0
	for _, body := range fastEdgeSeeds() {
		for _, p := range fastPrefixLists[:2] {
			if fastVersusGate(t, sc, body, p) {
				edge++
			}
		}
		fastVersusGate(t, tight, body, nil)
	}
	if edge < len(fastEdgeSeeds())/2 {
		t.Fatalf("only %d edge cases handled: the block scan is not exercised", edge)
	}
	if tightHandled < len(fastLimitSeeds)/2 {
		t.Fatalf("only %d cases handled under tight limits", tightHandled)
	}
	if !fastVersusGate(t, sc, `<T xmlns="urn:t"><R no="1">x</R></T>`, nil) {
		t.Fatal("a default namespace declaration is not handled")
	}
	if handled < len(fastSeeds) {
		t.Fatalf("only %d of %d cases handled: the fast body is not exercised", handled, len(fastSeeds)*len(fastPrefixLists))
	}
	for _, body := range []string{`<a><!-- c --></a>`, `<a>]]></a>`, "<a>\r\n</a>", `<a Id="x"/>`, `<a b="1" b="2"/>`, `<a m:b="1" x:b="2" xmlns:x="urn:m"/>`, `<a></b>`, `<soap:Header/>`} {
		if fastVersusGate(t, sc, body, nil) {
			t.Errorf("fail/%q was handled", body)
		}
	}
}

// FuzzFastBody: for any Body content, what the fast body handles the gate
// accepts and c14n canonicalizes to the same bytes.
func FuzzFastBody(f *testing.F) {
	for _, s := range fastSeeds {
		f.Add(s, uint8(0))
	}
	for _, s := range fastLimitSeeds {
		f.Add(s, uint8(4))
	}
	for i, s := range fastEdgeSeeds() {
		f.Add(s, uint8(i%8))
	}
	for _, s := range fastReplaySeeds() {
		f.Add(s, uint8(0))
		f.Add(s, uint8(4))
	}
	sc, err := xmlscan.NewScanner(xmlscan.DefaultConfig())
	if err != nil {
		f.Fatal(err)
	}
	tight := tightScanner(f)
	f.Fuzz(func(t *testing.T, body string, pl uint8) {
		s := sc
		if pl&4 != 0 {
			s = tight
		}
		fastVersusGate(t, s, body, fastPrefixLists[int(pl&3)])
		// The template's memo (fastbody_memo.go): taught by the body,
		// and a teacher's record offered to the body as a first item.
		memoVersusFresh(t, s, body, body, fastPrefixLists[int(pl&3)])
		memoVersusFresh(t, s, memoTeacher, memoOpen+body+memoClose, fastPrefixLists[int(pl&3)])
		// A teacher's deep record (a list at depth 3) offered to it.
		memoVersusFresh(t, s, memoDeepTeacher, memoOpen+`<r:H>h</r:H><r:Ls>`+body+`</r:Ls>`+memoClose, fastPrefixLists[int(pl&3)])
	})
}

// BenchmarkFastBody times the fast body pass alone on the payload of
// BenchmarkEngines, against SHA-256 over its canonical form (the part of
// the floor it adds to), in CPU time measured in the same run (issue 14:
// the pass should cost little more than the hash).
//
//	go test -run '^$' -bench FastBody ./internal/template
func BenchmarkFastBody(b *testing.B) {
	for _, c := range []struct {
		name  string
		items int
	}{{"4KiB", 20}, {"100KiB", 1000}, {"1MiB", 11000}} {
		b.Run(c.name, func(b *testing.B) { benchFastBody(b, benchEnvelope(c.items, "Item")) })
	}
}

// benchFastBody times the fast pass over env's Body against SHA-256 of
// the Body's canonical form alone, in one loop, and fails if the pass's
// digest is not exclusive C14N's.
func benchFastBody(b *testing.B, env []byte) {
	var ref xmlscan.Document
	if err := xmlscan.Scan(env, &ref); err != nil {
		b.Fatal(err)
	}
	body := bodyOf(&ref)
	ctx := newFastCtx(&ref, body, nil)
	start := bytes.Index(env, []byte("<soap:Body>")) + len("<soap:Body>")
	end := bytes.LastIndex(env, []byte("</soap:Body>"))
	lim := xmlscan.DefaultConfig().Limits
	fb := &fastBody{only: xmlscan.DefaultConfig().ElementOnly}
	canon, err := c14n.Canonicalize(c14n.AlgExcC14N, &ref, body, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	// The pass hashes the Body's content: the canonical Body without
	// its own start and end tags.
	inner := canon[bytes.IndexByte(canon, '>')+1 : len(canon)-len("</soap:Body>")]
	h := sha256.New()
	h.Write(inner)
	want := h.Sum(nil)
	b.ReportAllocs()
	b.SetBytes(int64(end - start))
	// The pass's digest is the one the hit path gives it (fastDigest):
	// SHA-NI's, which the sibling kernel hashes into, where the CPU has
	// it; the reference is crypto/sha256.
	var hf hash.Hash = sha256.New()
	if haveSHANI {
		hf = &shaNI{}
	}
	var cFast, cHash time.Duration
	for b.Loop() {
		c0 := proc.SelfCPU()
		hf.Reset()
		if !fb.run(env, start, end, ctx, &lim, hf) {
			b.Fatal("not handled")
		}
		got := hf.Sum(nil)
		c1 := proc.SelfCPU()
		if !bytes.Equal(got, want) {
			b.Fatal("digest differs from exclusive C14N's")
		}
		h.Reset()
		h.Write(canon)
		h.Sum(nil)
		cFast += c1 - c0
		cHash += proc.SelfCPU() - c1
	}
	b.ReportMetric(float64(cFast)/float64(cHash), "cpu-fast/sha256")
}

// TestScanBlocks checks the block scan (AVX2 where the CPU has it)
// against stopClass on every byte in every position of a block, and a
// window's padded last block.
func TestScanBlocks(t *testing.T) {
	for c := range 256 {
		for k := range 64 {
			var blk [128]byte
			for i := range blk {
				blk[i] = 'a' + byte(i%26)
			}
			blk[k], blk[127-k] = byte(c), byte(c)
			checkScan(t, blk[:])
		}
	}
}

// FuzzScanBlocks: the block scan agrees with stopClass on any bytes.
func FuzzScanBlocks(f *testing.F) {
	f.Add([]byte("<a b=\"1\">x&amp;y\r\n\t\x00\x7f\x80\xff'\"></a>"))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkScan(t, b[:len(b)&^63])
	})
}

func checkScan(t *testing.T, src []byte) {
	t.Helper()
	n := len(src) / 64
	tm, am := make([]uint64, n), make([]uint64, n)
	scanBlocks(src, tm, am)
	gt, ga := make([]uint64, n), make([]uint64, n)
	scanBlocksGeneric(src, gt, ga)
	for i, c := range src {
		if gt[i/64] != tm[i/64] || ga[i/64] != am[i/64] {
			t.Fatalf("fail/block %d: scanBlocks %#x %#x, scanBlocksGeneric %#x %#x", i/64, tm[i/64], am[i/64], gt[i/64], ga[i/64])
		}
		gotT, gotA := tm[i/64]>>(i%64)&1 == 1, am[i/64]>>(i%64)&1 == 1
		if wantT, wantA := stopClass[c]&stopText != 0, stopClass[c]&stopAttr != 0; gotT != wantT || gotA != wantA {
			t.Fatalf("fail/byte %#x at %d: text %v attr %v, want %v %v", c, i, gotT, gotA, wantT, wantA)
		}
	}
}
