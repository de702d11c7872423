package template

import (
	"fmt"
	"strings"
	"testing"

	"github.com/wssgw/wssgw/internal/xmlscan"
)

// fastReplaySeeds are fastReplayBase and a list of replayItem with each
// byte of an item changed in turn (fastReplayEdits).
func fastReplaySeeds() []string {
	return append(fastReplayBase(), fastReplayEdits("X")...)
}

// fastReplayBase attack sibling replay (fastbody_replay.go): a list whose
// first item is recorded and whose second replays it, then a third item
// that differs from the record in one place the replay must notice (or
// must not mind).
func fastReplayBase() []string {
	const (
		open  = `<r:O xmlns:r="urn:r">`
		close = `</r:O>`
		item  = `<r:I b="1" a="2"><r:N>t</r:N></r:I>`
		leaf  = `<r:I b="1" a="2">t</r:I>`
	)
	list := func(x string) string { return open + item + item + x + close }
	leaves := func(n int, x string) string { return open + strings.Repeat(leaf, n) + x + close }
	s := []string{
		// Replays that hold: other values, empty ones, longer text.
		list(item), list(`<r:I b="12345" a=""><r:N></r:N></r:I>`), list(`<r:I b="x'y" a="&gt;"><r:N>longer text, still plain</r:N></r:I>`),
		list(`<r:I b="1" a="2"><r:N>` + strings.Repeat("z", 70) + `</r:N></r:I>`), leaves(5, ""), leaves(2, `<r:I b="" a="">`+strings.Repeat("v", 66)+`</r:I>`),
		// A name, an end tag.
		list(`<r:J b="1" a="2"><r:N>t</r:N></r:I>`), list(`<r:J b="1" a="2"><r:N>t</r:N></r:J>`), list(`<r:I b="1" a="2"><r:M>t</r:N></r:I>`),
		list(`<r:I b="1" a="2"><r:N>t</r:N></r:J>`), list(`<r:I b="1" a="2"><r:N>t</r:Nx></r:I>`), list(`<r:I b="1" a="2"><r:N>t</r:N ></r:I>`),
		list(`<r:I b="1" a="2"><r:N>t</r:N></r:I >`), list(`<r:I b="1" a="2"><r:N>t</r:N></r:I`), list(`<r:I b="1" a="2"><r:N>t</r:N>`),
		list(`<s:I b="1" a="2"><s:N>t</s:N></s:I>`),
		// An attribute's name, order, quotes, spacing.
		list(`<r:I b="1" b="2"><r:N>t</r:N></r:I>`), list(`<r:I c="1" a="2"><r:N>t</r:N></r:I>`), list(`<r:I a="1" b="2"><r:N>t</r:N></r:I>`),
		list(`<r:I b='1' a="2"><r:N>t</r:N></r:I>`), list(`<r:I b="1" a='2'><r:N>t</r:N></r:I>`), list(`<r:I b="1' a='2"><r:N>t</r:N></r:I>`),
		list(`<r:I b="1" a="2" ><r:N>t</r:N></r:I>`), list(`<r:I b="1"  a="2"><r:N>t</r:N></r:I>`), list(`<r:I b="1" a="2" c="3"><r:N>t</r:N></r:I>`),
		list(`<r:I b="1"><r:N>t</r:N></r:I>`), list(`<r:I b="1" Id="2"><r:N>t</r:N></r:I>`), list(`<r:I b="1" r:a="2"><r:N>t</r:N></r:I>`),
		// A nested child missing, extra, deeper, empty.
		list(`<r:I b="1" a="2"></r:I>`), list(`<r:I b="1" a="2"/>`), list(`<r:I b="1" a="2"><r:N>t</r:N><r:N>u</r:N></r:I>`),
		list(`<r:I b="1" a="2"><r:N>t<r:N>u</r:N></r:N></r:I>`), list(`<r:I b="1" a="2"><r:N/></r:I>`), list(`<r:I b="1" a="2"><r:N>t</r:N>x</r:I>`),
		// A value holding a stop byte.
		list(`<r:I b="1&amp;" a="2"><r:N>t</r:N></r:I>`), list(`<r:I b="1&lt;" a="2"><r:N>t</r:N></r:I>`), list(`<r:I b="1<" a="2"><r:N>t</r:N></r:I>`),
		list("<r:I b=\"1\t\" a=\"2\"><r:N>t</r:N></r:I>"), list("<r:I b=\"1\n\" a=\"2\"><r:N>t</r:N></r:I>"), list("<r:I b=\"1\r\" a=\"2\"><r:N>t</r:N></r:I>"),
		list(`<r:I b="1&#34;" a="2"><r:N>t</r:N></r:I>`), list(`<r:I b="é" a="2"><r:N>t</r:N></r:I>`), list("<r:I b=\"\x01\" a=\"2\"><r:N>t</r:N></r:I>"),
		list(`<r:I b="1&" a="2"><r:N>t</r:N></r:I>`), list(`<r:I b="1" a="2&#x9;"><r:N>t</r:N></r:I>`),
		// Text crossing into markup, text with a stop byte.
		list(`<r:I b="1" a="2"><r:N>t&amp;</r:N></r:I>`), list(`<r:I b="1" a="2"><r:N>t></r:N></r:I>`), list(`<r:I b="1" a="2"><r:N>t]]></r:N></r:I>`),
		list(`<r:I b="1" a="2"><r:N>t<r:X/></r:N></r:I>`), list("<r:I b=\"1\" a=\"2\"><r:N>t\r</r:N></r:I>"), list(`<r:I b="1" a="2"><r:N>t<!--c--></r:N></r:I>`),
		list(`<r:I b="1" a="2"><r:N>é</r:N></r:I>`), list(`<r:I b="1" a="2"><r:N>t</r:N></r:I>tail`), list(`<r:I b="1" a="2"><r:N>t</r:N><![CDATA[x]]></r:I>`),
		leaves(2, `<r:I b="1" a="2">t&lt;</r:I>`), leaves(2, `<r:I b="1" a="2">t</r:I>&amp;`), leaves(2, `<r:I b="1" a="2">t<r:I/></r:I>`),
		// Siblings at other depths and under other parents.
		list(`<r:W>` + item + item + `</r:W>`), open + item + `<r:W>` + item + `</r:W>` + item + close,
		open + item + close + `<s:O xmlns:s="urn:s" xmlns:r="urn:r">` + item + close[:2] + `s:O>`,
		open + item + close + `<r:O xmlns:r="urn:other">` + item + close, open + item + close + `<O>` + item + `</O>`,
		open + item + close + `<r:O xmlns:r="http://www.w3.org/2000/09/xmldsig#">` + item + close,
		// Namespace declarations on a sibling or inside it.
		list(`<r:I xmlns:r="urn:r" b="1" a="2"><r:N>t</r:N></r:I>`), list(`<r:I b="1" a="2" xmlns:r="urn:x"><r:N>t</r:N></r:I>`),
		list(`<r:I b="1" a="2"><r:N xmlns:r="urn:y">t</r:N></r:I>`), list(`<r:I b="1" a="2"><r:N xmlns="urn:y">t</r:N></r:I>`),
		list(`<r:I b="1" a="2"><r:N xmlns:q="urn:y">t</r:N></r:I>`),
		// Nested lists: inner items recorded inside an outer one, replayed
		// inside the next, which is then recorded with their parts.
		open + `<r:I b="1" a="2"><r:L x="1">t</r:L><r:L x="2">u</r:L></r:I><r:I b="1" a="2"><r:L x="3">v</r:L><r:L x="4">w</r:L><r:L x="5">z</r:L></r:I>` + item + close,
		open + `<r:I b="1" a="2"><r:L x="1">t</r:L><r:L x="2">u</r:L></r:I><r:I b="1" a="2"><r:L x="3">v</r:L><r:L y="4">w</r:L></r:I>` + close,
		open + `<r:I b="1" a="2"><r:L x="1">t</r:L><r:L x="2">u</r:L></r:I><r:I b="1" a="2"><r:L x="3">v</r:L><r:L x="4">w</r:M></r:I>` + close,
		open + `<r:I b="1" a="2"><r:L x="1">t</r:L><r:L x="2">u</r:L></r:I><r:I b="1" a="2"><r:L x="3">v</r:L><r:L x="4">w></r:L></r:I>` + close,
		open + strings.Repeat(`<r:I b="1" a="2"><r:L x="1">t</r:L><r:L x="2">u</r:L></r:I>`, 3) + `<r:I b="1" a="2"><r:L x="1">t</r:L><r:L x="2">u</r:L></r:J>` + close,
		open + strings.Repeat(`<r:I b="1" a="2"><r:L x="1" w="0"><r:V>t</r:V></r:L><r:L x="2" w="0"><r:V>u</r:V></r:L></r:I>`, 3) + `<r:I b="1" a="2"><r:L x="1" w="0"><r:V>t</r:V></r:L><r:L x="2" w="0"><r:V>u</r:V></r:L></r:I>` + close,
		open + `<r:I b="1" a="2"><r:L x="1">t</r:L><r:L x="2">u</r:L></r:I><r:I b="1" a="2"><r:L x="1">t</r:L><r:L x="2">u</r:L></r:I><r:I b="1" a="2"><r:L x="1">t</r:L><r:L x="2">u&gt;</r:L></r:I>` + close,
		open + `<r:I b="1" a="2"><r:L x="1">t</r:L><r:L x="2">u</r:L></r:I><r:I b="1" a="2"><r:L x="1">t</r:L><r:L x="2">u</r:L></r:I><r:I b="1" a="2"><r:L x="1">t</r:L><r:L x="2">u</r:L ></r:I>` + close,
		open + `<r:I b="1" a="2"><r:L x="1"><r:V/></r:L><r:L x="2"><r:V/></r:L></r:I>` + close,
		// Near the limits of tightScanner: elements, text, values.
		leaves(6, ""), leaves(7, ""), leaves(3, ""), leaves(4, ""), leaves(5, ""), open + item + item + close, open + item + item + item + close, leaves(1, `<r:I b="1" a="2">1234567</r:I>`), leaves(1, `<r:I b="1" a="2">123456</r:I>`),
		leaves(1, `<r:I b="`+strings.Repeat("v", 41)+`" a="2">t</r:I>`), leaves(1, `<r:I b="`+strings.Repeat("v", 42)+`" a="2">t</r:I>`),
		open + `<r:I b="1" a="2"><r:N>123</r:N><r:N>456</r:N></r:I><r:I b="1" a="2"><r:N>123</r:N><r:N>4567</r:N></r:I>` + close,
		open + `<r:I b="1" a="2">12<r:N>3</r:N>456</r:I><r:I b="1" a="2">12<r:N>3</r:N>4567</r:I>` + close,
		// A recorded subtree the walk did not take tag by tag as it is:
		// an empty-element tag, an end tag's white space, a start tag
		// simpleTag leaves to startTag (reordered, declaring).
		open + strings.Repeat(`<r:I b="1" a="2"><r:N/></r:I>`, 3) + close, open + strings.Repeat(`<r:I b="1"><r:N>t</r:N ></r:I>`, 3) + close,
		open + strings.Repeat(`<r:I b="1" a="2"><r:N r:z="1" y="2">t</r:N></r:I>`, 3) + close,
		open + strings.Repeat(`<r:I b="1" a="2"><r:N xmlns:q="urn:q">t</r:N></r:I>`, 2) + close,
		open + strings.Repeat(`<r:I b="1" a="2">x>y<r:N>t</r:N></r:I>`, 3) + close, open + `<r:I b="1" a="2">x>y<r:N>t</r:N></r:I><r:I b="1" a="2">xzy<r:N>t</r:N></r:I>` + close,
		// Text parts with references, '>' and non-ASCII, replayed and
		// written escaped in document order with the reordered start
		// tags around them; and what the walk refuses in them.
		list(`<r:I b="1" a="2"><r:N>a &amp; b &lt; c &gt; d &#60;&#x3E;&#38;&#9;&#xD;&quot;&apos;</r:N></r:I>`),
		list(`<r:I b="1" a="2"><r:N>Müller → 東京 🚚 x>y ]>]] ]]&gt;</r:N></r:I>`),
		open + `<r:I b="1" a="2">&amp;<r:N>&lt;</r:N>&gt;</r:I><r:I b="3" a="4">x&amp;y<r:N>é</r:N>></r:I><r:I b="5" a="6">p<r:N>q</r:N>r</r:I><r:I b="7" a="8">&#233;<r:N>&#x1F69A;</r:N>]]</r:I>` + close,
		open + `<r:I b="1" a="2">t<r:N>t</r:N>t</r:I><r:I b="1" a="2">&amp;<r:N>t</r:N>]]></r:I>` + close,
		list(`<r:I b="1" a="2"><r:N>a &amp b</r:N></r:I>`), list(`<r:I b="1" a="2"><r:N>a &#0; b</r:N></r:I>`), list(`<r:I b="1" a="2"><r:N>a &#xD800; b</r:N></r:I>`),
		list(`<r:I b="1" a="2"><r:N>a &bogus; b</r:N></r:I>`), list("<r:I b=\"1\" a=\"2\"><r:N>a &amp; \xff</r:N></r:I>"), list("<r:I b=\"1\" a=\"2\"><r:N>\xc3</r:N></r:I>"),
		list("<r:I b=\"1\" a=\"2\"><r:N>&amp;\x01</r:N></r:I>"), list("<r:I b=\"1\" a=\"2\"><r:N>é\r\n</r:N></r:I>"), list(`<r:I b="1" a="2"><r:N>x &amp;</r:N>`),
		list(`<r:I b="1" a="2"><r:N>&amp;`), list(`<r:I b="1" a="2"><r:N>é`),
	}
	// A remembered long name, then a start tag cut short at the end of
	// the content: its compare must not read past the message (it once
	// did, and panicked, when nothing followed the Body).
	long := "r:" + strings.Repeat("n", 60)
	s = append(s, `<r:O xmlns:r="urn:r"><`+long+`>t</`+long+`><r:nnn`, `<r:O xmlns:r="urn:r"><`+long+`>t</`+long+`><`+long[:40])
	// A replayed sibling whose last fixed bytes would match the Body's
	// end tag after the content: it ends past the content.
	s = append(s, `<soap:Envelope><soap:Body><soap:x>t</soap:x></soap:Body><soap:Body><soap:x>u</soap:x>`,
		`<soap:O><soap:Body>t</soap:Body><soap:Body>t`)
	return s
}

// replayItem has fixed segments of every length class the compiled
// replay compares differently (up to 16 bytes, 17 to 32, more than 32 and
// so partly against the record), three attributes to reorder, and a
// leaf whose text is empty in the record.
const replayItem = `<r:I c="3" b="1" a="2"><r:Nnnnnnnnnnnnnnnnn>t</r:Nnnnnnnnnnnnnnnnn><r:Qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq>u</r:Qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq><r:E></r:E></r:I>`

// fastReplayEdits are lists of replayItem whose third item differs from
// the recorded first in one byte, at each position in turn, that byte
// replaced by each of with.
func fastReplayEdits(with string) []string {
	var s []string
	for k := range len(replayItem) {
		for _, c := range []byte(with) {
			if replayItem[k] == c {
				continue
			}
			b := []byte(replayItem)
			b[k] = c
			s = append(s, `<r:O xmlns:r="urn:r">`+replayItem+replayItem+string(b)+replayItem+`</r:O>`)
		}
	}
	return s
}

// fastReplayEdges put a replayed list's values and texts across the scan's
// 64-byte blocks at every offset (pad shifts the list), some longer than
// two blocks, and a list longer than a scan window (4 KiB).
func fastReplayEdges() []string {
	var s []string
	for pad := range 64 {
		var b strings.Builder
		b.WriteString(strings.Repeat("p", pad) + `<r:O xmlns:r="urn:r">`)
		for i, n := range []int{1, 60, 63, 64, 65, 130, 0, 7} {
			fmt.Fprintf(&b, `<r:I b="%s" a="%d">%s</r:I>`, strings.Repeat("v", n), i, strings.Repeat("t", (n*3+pad)%140))
		}
		b.WriteString(`</r:O>`)
		s = append(s, b.String())
	}
	var b strings.Builder
	b.WriteString(`<r:O xmlns:r="urn:r">`)
	for i := range 200 {
		fmt.Fprintf(&b, `<r:I b="%d" a="x"><r:N>text %d</r:N></r:I>`, i*7919%1000, i)
	}
	b.WriteString(`<r:I b="1" a="x"><r:N>text&lt;</r:N></r:I></r:O>`)
	return append(s, b.String())
}

// TestFastBodyReplay: the replay seeds give the gate's verdict and c14n's
// form, with the default limits and tight ones; and the repeated lists
// are replayed, not walked.
func TestFastBodyReplay(t *testing.T) {
	sc, err := xmlscan.NewScanner(xmlscan.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	tight := tightScanner(t)
	handled := 0
	for _, body := range fastReplaySeeds() {
		for _, p := range fastPrefixLists[:2] {
			if fastVersusGate(t, sc, body, p) {
				handled++
			}
		}
		fastVersusGate(t, tight, body, nil)
	}
	if handled < len(fastReplayBase()) {
		t.Fatalf("only %d replay cases handled", handled)
	}
	// Each byte of a replayed sibling changed to a stop byte of either
	// mask, white space, another name byte, a quote of the other kind.
	for _, body := range append(fastReplayEdits("\"<&> \t'x>/=:"), fastReplayEdges()...) {
		fastVersusGate(t, sc, body, nil)
		fastVersusGate(t, tight, body, nil)
	}
	for _, c := range []struct {
		body string
		want int
	}{
		{`<r:O xmlns:r="urn:r">` + strings.Repeat(`<r:I b="1" a="2"><r:N>t</r:N></r:I>`, 4) + `</r:O>`, 3},
		{`<r:O xmlns:r="urn:r">` + strings.Repeat(`<r:I b="1" a="2">t</r:I>`, 3) + `</r:O>`, 2},
		{`<r:O xmlns:r="urn:r">` + strings.Repeat(`<r:I b="1" a="2"/>`, 3) + `</r:O>`, 0},
		{`<r:O xmlns:r="urn:r"><r:I b="1"><r:N>t</r:N></r:I><r:I b="1"><r:N>t</r:N ></r:I><r:I b="1"><r:N>t</r:N></r:I></r:O>`, 1},
		// Other values and text are replayed.
		{`<r:O xmlns:r="urn:r"><r:I b="1" a="2">t</r:I><r:I b="22" a="">tt</r:I><r:I b="" a="333"></r:I></r:O>`, 2},
		{`<r:O xmlns:r="urn:r"><r:I b="1">a<r:N>t</r:N>b</r:I><r:I b="2">aa<r:N>tt</r:N></r:I><r:I b="3"><r:N></r:N>bbb</r:I></r:O>`, 2},
		{"<r:O xmlns:r=\"urn:r\"><r:I>\n <r:N>t</r:N>\n</r:I><r:I>\n  <r:N>t</r:N>\n</r:I></r:O>", 1},
		// Nested lists of other lengths: the inner items are recorded
		// inside the outer one and replayed.
		{`<r:O xmlns:r="urn:r"><r:I b="1" a="2"><r:L x="1">t</r:L><r:L x="2">u</r:L></r:I><r:I b="1" a="2"><r:L x="3">v</r:L><r:L x="4">w</r:L><r:L x="5">z</r:L></r:I></r:O>`, 4},
		{`<r:O xmlns:r="urn:r"><r:I b="1" a="2"><r:L x="1"><r:V>t</r:V></r:L><r:L x="2"><r:V>u</r:V></r:L></r:I><r:I b="1" a="2"><r:L x="3"><r:V>v</r:V></r:L></r:I><r:I b="1" a="2"><r:L x="3"><r:V>v</r:V></r:L></r:I></r:O>`, 3},
		// Long fixed segments, three attributes reordered; a third item
		// whose attribute name differs is walked (and recorded), its three
		// children replayed against the first item's (sibAlts), and the
		// fourth against the first item's record; one whose value
		// differs replayed.
		{`<r:O xmlns:r="urn:r">` + strings.Repeat(replayItem, 4) + `</r:O>`, 3},
		{fastReplayEdits("X")[5], 5}, {fastReplayEdits("X")[8], 3},
		// A record's slot taken by another shape (sibAlts: the slot
		// of A, not the one that replayed last) recompiles its kernel
		// program: the A items after E are not counted as E's (the N
		// of B and of the first E replay too).
		{`<r:O xmlns:r="urn:r">` + strings.Repeat(altA, 3) + strings.Repeat(`<r:J b="1"><r:N>t</r:N></r:J>`, 2) + `<r:K>t</r:K><r:L>t</r:L>` +
			strings.Repeat(`<r:I b="1" a="2"><r:N>t</r:N><r:M>u</r:M></r:I>`, 2) + strings.Repeat(altA, 8) + `</r:O>`, 2 + 1 + 1 + 1 + 1 + 8},
		// Items of two shapes in turn: each replays against its own.
		{`<r:O xmlns:r="urn:r">` + strings.Repeat(`<r:I b="1"><r:N>t</r:N></r:I><r:I b="2"><r:N>t</r:N><r:D>d</r:D></r:I>`, 4) + `</r:O>`, 6 + 1},
		// Across blocks and windows.
		{fastReplayEdges()[17], 7}, {fastReplayEdges()[64], 200},
		// Text with references, '>' and non-ASCII is replayed (the
		// last item of the edge above too).
		{`<r:O xmlns:r="urn:r">` + strings.Repeat(`<r:I b="1" a="2"><r:N>a &amp; b é > c</r:N></r:I>`, 4) + `</r:O>`, 3},
		{`<r:O xmlns:r="urn:r"><r:I b="1" a="2">&amp;<r:N>&lt;</r:N>&gt;</r:I><r:I b="3" a="4">x&amp;y<r:N>é</r:N>></r:I><r:I b="5" a="6">p<r:N>q</r:N>r</r:I></r:O>`, 2},
	} {
		if got := replays(t, sc, c.body); got != c.want {
			t.Errorf("%q: %d replays, want %d", c.body, got, c.want)
		}
	}
}

// altA is an item of TestFastBodyReplay's slot case.
const altA = `<r:I b="1" a="2"><r:N>t</r:N></r:I>`

// replays is how many subtrees the fast body replays in body.
func replays(t *testing.T, sc *xmlscan.Scanner, body string) int {
	t.Helper()
	var ref xmlscan.Document
	if err := sc.Scan([]byte(fastHead+fastTail), &ref); err != nil {
		t.Fatal(err)
	}
	data := []byte(fastHead + body + fastTail)
	lim := sc.Limits()
	fb := &fastBody{only: xmlscan.DefaultConfig().ElementOnly}
	if !fb.run(data, len(fastHead), len(data)-len(fastTail), newFastCtx(&ref, bodyOf(&ref), nil), &lim, &bufHash{}) {
		t.Fatalf("%q not handled", body)
	}
	var d xmlscan.Document
	if err := sc.Scan(data, &d); err != nil {
		t.Fatal(err)
	}
	if fb.elems != len(d.Elements) {
		t.Errorf("%q: %d elements counted, the gate counts %d", body, fb.elems, len(d.Elements))
	}
	return fb.rec.replayed
}

// TestFastBodyKernLimits: on lists long enough for the sibling kernel
// (fastbody_kern.go: it leaves the last 128 bytes of data to the replay
// loop), the element count, a value's length and a sibling's text reach
// the gate's limits at every item in turn; the fast body's verdict is
// the gate's.
func TestFastBodyKernLimits(t *testing.T) {
	const items = 40
	var list strings.Builder
	for i := range items {
		fmt.Fprintf(&list, `<r:I b="%d" a="x"><r:N>t%d</r:N></r:I>`, i%10, i%10)
	}
	// White space after the list: its last items are before the 128
	// bytes the kernel leaves.
	body := `<r:O xmlns:r="urn:r">` + list.String() + `</r:O>` + strings.Repeat(" ", 200)
	handled := 0
	for n := 1; n <= 2*items+4; n++ {
		c := xmlscan.DefaultConfig()
		c.Limits.MaxElements = 2 + n // the envelope's 3 elements, the list's
		sc, err := xmlscan.NewScanner(c)
		if err != nil {
			t.Fatal(err)
		}
		if fastVersusGate(t, sc, body, nil) {
			handled++
		}
	}
	if handled == 0 {
		t.Error("the list not handled under any element limit")
	}
	for i := range items {
		long := strings.Replace(body, fmt.Sprintf(`<r:I b="%d" a="x"><r:N>t%d<`, i%10, i%10), fmt.Sprintf(`<r:I b="%d" a="%s"><r:N>t%dz<`, i%10, strings.Repeat("x", 61), i%10), 1)
		long = strings.Replace(long, `</r:I>`, `</r:I >`, i) // the first i items walked, not replayed
		for _, l := range []xmlscan.Limits{{MaxAttrValueLen: 60}, {MaxTextLen: 2}} {
			c := xmlscan.DefaultConfig()
			if l.MaxAttrValueLen != 0 {
				c.Limits.MaxAttrValueLen = l.MaxAttrValueLen
			} else {
				c.Limits.MaxTextLen = l.MaxTextLen
			}
			sc, err := xmlscan.NewScanner(c)
			if err != nil {
				t.Fatal(err)
			}
			if fastVersusGate(t, sc, long, nil) {
				t.Errorf("item %d over the limits %+v handled", i, l)
			}
		}
	}
}
