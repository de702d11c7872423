package xmlscan

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// The gate's SIMD steps (nameRun, charsRun, valueRun), its word steps
// (validateChars' words, attrClass's tail word, wordName and the name
// cache, the end tag's two words) and its byte loops must give the same
// verdict on every input: the gate is the security boundary in front of
// both engines (DESIGN.md §5.1). These tests put the bytes that decide a
// verdict (non-ASCII name characters, invalid UTF-8, characters outside
// Char, '<' '&' '>' and quotes in values, "]]>" in text, end tags one
// byte off) at every offset of the 16- and 32-byte steps, and require the
// stated verdict from the gate with and without SIMD, into a fresh
// Document and into one whose caches are full of other names.

// scanAllWays scans data with and without the SIMD steps, into a fresh
// Document and into warm, and returns a description of the first way
// that disagrees with the SIMD scan into a fresh Document ("" if none),
// and that scan's error.
func scanAllWays(sc *Scanner, warm *Document, data []byte) (string, error) {
	var want Document
	werr := sc.Scan(data, &want)
	check := func(how string, d *Document, err error) string {
		switch {
		case !reflect.DeepEqual(err, werr):
			return fmt.Sprintf("%s: error %v, with SIMD into a fresh Document %v", how, err, werr)
		case err == nil:
			if diff := docDiff(d, &want); diff != "" {
				return how + ": " + diff
			}
		}
		return ""
	}
	if diff := check("with SIMD, warm Document", warm, sc.Scan(data, warm)); diff != "" {
		return diff, werr
	}
	var diff string
	withoutSIMD(func() {
		var cold Document
		if diff = check("without SIMD", &cold, sc.Scan(data, &cold)); diff != "" {
			return
		}
		diff = check("without SIMD, warm Document", warm, sc.Scan(data, warm))
	})
	return diff, werr
}

// warmDocument returns a Document that has scanned messages with many
// names, among them prefixes and extensions of the names the tests use.
func warmDocument(t *testing.T, sc *Scanner) *Document {
	t.Helper()
	var b strings.Builder
	b.WriteString(`<r xmlns:p="urn:a">`)
	for n := 1; n <= 33; n++ {
		name := strings.Repeat("a", n)
		fmt.Fprintf(&b, `<%s/><%sb/><p:%s/><n%s/><n%sb%s/>`, name, name, name, name, name, name)
	}
	b.WriteString(`</r>`)
	var d Document
	if err := sc.Scan([]byte(b.String()), &d); err != nil {
		t.Fatalf("warm-up message: %v", err)
	}
	return &d
}

// edgePads and edgeTails are the bytes put before and after the byte
// under test, in the same run (name, value, text): every offset of a
// 32-byte step and the next, and tails that leave the steps none, some or
// all of a block.
var (
	edgePads = func() (out []int) {
		return append(out, 0, 1, 2, 3, 5, 7, 8, 9, 13, 14, 15, 16, 17, 23, 24, 29, 30, 31, 32, 33, 34, 40, 47, 48, 63, 64, 65)
	}()
	edgeTails = []int{0, 1, 7, 8, 15, 16, 17, 31, 32, 33, 64}
)

// TestGateEdgesEveryOffset: ok/... cases must pass and fail/... cases
// fail with their kind, the same way with and without SIMD, whatever
// comes before and after the deciding bytes.
func TestGateEdgesEveryOffset(t *testing.T) {
	name := func(attack string) func(pad, tail string) string {
		return func(pad, tail string) string { return "<r><n" + pad + attack + tail + "/></r>" }
	}
	value := func(q, attack string) func(pad, tail string) string {
		return func(pad, tail string) string { return "<r x=" + q + pad + attack + tail + q + "/>" }
	}
	text := func(attack string) func(pad, tail string) string {
		return func(pad, tail string) string { return "<r>" + pad + attack + tail + "</r>" }
	}
	for _, tc := range []struct {
		name string
		doc  func(pad, tail string) string
		kind Kind // 0: accepted
	}{
		// Names: bytes from 0x80 continue a name run, the runes decide.
		{"ok/name-e-acute", name("é"), 0},
		{"ok/name-middle-dot", name("·"), 0},     // U+00B7: NameChar, not NameStartChar
		{"ok/name-combining", name("\u0300"), 0}, // U+0300: NameChar
		{"ok/name-cjk", name("漢"), 0},            // U+6F22
		{"ok/name-digits-dots", name("-.09"), 0},
		{"fail/name-line-separator", name("\u2028"), KindInvalidName}, // a Char, not a NameChar
		{"fail/name-nbsp", name("\u00a0"), KindInvalidName},
		{"fail/name-c1", name("\u0085"), KindInvalidName},
		{"fail/name-fffd", name("\ufffd"), KindInvalidName}, // a NameStartChar in XML 1.0 5th ed., not in encoding/xml's tables
		{"fail/name-supplementary", name("\U00010000"), KindInvalidName},
		{"fail/name-invalid-utf8", name("\xff"), KindInvalidUTF8},
		{"fail/name-lone-continuation", name("\x80"), KindInvalidUTF8},
		{"fail/name-truncated", name("\xc3"), KindInvalidUTF8},
		{"fail/name-overlong", name("\xc1\x81"), KindInvalidUTF8},
		{"fail/name-surrogate", name("\xed\xa0\x80"), KindInvalidUTF8},
		{"fail/name-fffe", name("\xef\xbf\xbe"), KindIllegalChar},
		{"fail/name-ffff", name("\xef\xbf\xbf"), KindIllegalChar},
		{"fail/name-del", name("\x7f"), KindSyntax}, // ends the name; not white space
		{"fail/name-two-colons", name(":x:"), KindInvalidName},
		{"fail/name-nul", name("\x00"), KindIllegalChar},
		{"fail/name-start-middle-dot", func(pad, tail string) string { return "<r>" + pad + "<·" + tail + "/></r>" }, KindInvalidName},
		{"fail/name-start-combining", func(pad, tail string) string { return "<r>" + pad + "<\u0300" + tail + "/></r>" }, KindInvalidName},
		{"fail/name-start-digit", func(pad, tail string) string { return "<r>" + pad + "<9" + tail + "/></r>" }, KindInvalidName},
		// Attribute values: the quote ends them, '<' is refused, '&'
		// starts a reference, TAB LF CR are normalized.
		{"ok/value-gt", value(`"`, ">"), 0},
		{"ok/value-apos-in-quot", value(`"`, "'"), 0},
		{"ok/value-quot-in-apos", value(`'`, `"`), 0},
		{"ok/value-ref", value(`"`, "&amp;&#x9;&#60;"), 0},
		{"ok/value-white-space", value(`'`, "\t\r\n"), 0},
		{"ok/value-tab", value(`"`, "\t"), 0},
		{"ok/value-lf", value(`"`, "\n"), 0},
		{"ok/value-cr", value(`"`, "\r"), 0},
		{"ok/value-crlf", value(`"`, "\r\n"), 0},
		{"ok/value-del", value(`"`, "\x7f"), 0},
		{"ok/value-c1", value(`"`, "\u0080\u009f"), 0},
		{"ok/value-fffd", value(`"`, "\ufffd"), 0},
		{"ok/value-max", value(`"`, "\U0010ffff"), 0},
		{"fail/value-lt", value(`"`, "<"), KindLtInAttr},
		{"fail/value-lt-apos", value(`'`, "<"), KindLtInAttr},
		{"fail/value-amp", value(`"`, "&"), KindBadReference},
		{"fail/value-ref-to-nul", value(`"`, "&#0;"), KindIllegalChar},
		{"fail/value-ref-to-fffe", value(`"`, "&#xFFFE;"), KindIllegalChar},
		{"fail/value-nul", value(`"`, "\x00"), KindIllegalChar},
		{"fail/value-esc", value(`'`, "\x1b"), KindIllegalChar},
		{"fail/value-fffe", value(`"`, "\xef\xbf\xbe"), KindIllegalChar},
		{"fail/value-ffff", value(`"`, "\xef\xbf\xbf"), KindIllegalChar},
		{"fail/value-surrogate", value(`"`, "\xed\xb0\x80"), KindInvalidUTF8},
		{"fail/value-above-10ffff", value(`"`, "\xf4\x90\x80\x80"), KindInvalidUTF8},
		{"fail/value-overlong", value(`"`, "\xe0\x80\xaf"), KindInvalidUTF8},
		{"fail/value-truncated", value(`"`, "\xe2\x82"), KindInvalidUTF8},
		{"fail/value-unterminated", func(pad, tail string) string { return `<r x="` + pad + tail }, KindEOF},
		{"fail/value-other-quote-only", func(pad, tail string) string { return `<r x="` + pad + "'" + tail + "'/>" }, KindEOF},
		// Character data: '<' ends it, "]]>" is refused (§2.4).
		{"ok/text-gt", text(">"), 0},
		{"ok/text-brackets", text("]]"), 0},
		{"ok/text-bracket-gt", text("]>"), 0},
		{"ok/text-escaped-cdata-end", text("]]&gt;"), 0},
		{"ok/text-crlf", text("\r\n"), 0},
		{"ok/text-tab", text("\t"), 0},
		{"ok/text-emoji", text("\U0001F600"), 0},
		{"fail/text-cdata-end", text("]]>"), KindCDATAEnd},
		{"fail/text-amp", text("&"), KindBadReference},
		{"fail/text-vt", text("\x0b"), KindIllegalChar},
		{"fail/text-ffff", text("\xef\xbf\xbf"), KindIllegalChar},
		{"fail/text-surrogate", text("\xed\xbf\xbf"), KindInvalidUTF8},
		{"fail/text-lt-at-end", func(pad, tail string) string { return "<r>" + pad + tail + "<" }, KindEOF},
		// End tags: the name must repeat the start tag's, byte for byte.
		{"ok/end-tag", func(pad, tail string) string {
			return "<r><n" + pad + "é" + tail + "></n" + pad + "é" + tail + "></r>"
		}, 0},
		{"fail/end-tag-other-rune", func(pad, tail string) string {
			return "<r><n" + pad + "é" + tail + "></n" + pad + "è" + tail + "></r>"
		}, KindTagMismatch},
		{"fail/end-tag-longer", func(pad, tail string) string { return "<r><n" + pad + tail + "></n" + pad + tail + "é></r>" }, KindTagMismatch},
		{"fail/end-tag-shorter", func(pad, tail string) string { return "<r><n" + pad + tail + "é></n" + pad + tail + "></r>" }, KindTagMismatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := NewScanner(DefaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			warm := warmDocument(t, sc)
			for _, np := range edgePads {
				for _, nt := range edgeTails {
					doc := tc.doc(strings.Repeat("a", np), strings.Repeat("b", nt))
					diff, err := scanAllWays(sc, warm, []byte(doc))
					if diff != "" {
						t.Fatalf("%q: %s", doc, diff)
					}
					switch {
					case tc.kind == 0 && err != nil:
						t.Fatalf("Scan(%q) = %v, want it accepted", doc, err)
					case tc.kind != 0 && kindOf(err) != tc.kind:
						t.Fatalf("Scan(%q) = %v, want kind %v", doc, err, tc.kind)
					}
				}
			}
		})
	}
}

// TestEndTagMismatchEdges closes elements whose names have 1 to 33 bytes
// (one or two words, or more) with end tags that differ in one byte
// anywhere (the words' bytes 0-7 and 8-15, and past them), in the last
// byte of a two-byte character, in the prefix only (both prefixes bound
// to one namespace: WFC Element Type Match compares the names, not the
// expanded names), by a prefix added or dropped, or by one character more
// or less; with 0 to 19 bytes of input after the end tag's name (or none:
// the root's end tag), so that both the word comparison and the byte
// comparison decide.
func TestEndTagMismatchEdges(t *testing.T) {
	sc, err := NewScanner(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	warm := warmDocument(t, sc)
	const letters = "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz"
	type pair struct{ start, end string }
	var pairs []pair
	for _, n := range []int{1, 2, 3, 6, 7, 8, 9, 10, 14, 15, 16, 17, 18, 24, 31, 32, 33} {
		name := letters[:n]
		pairs = append(pairs, pair{name, name},
			pair{name, name + "z"}, pair{name + "z", name}, pair{name, name + "é"}, pair{name + "é", name},
			pair{"p:" + name, "p:" + name}, pair{"p:" + name, "q:" + name}, pair{"p:" + name, name}, pair{name, "p:" + name})
		for i := 0; i < n; i++ {
			pairs = append(pairs, pair{name, name[:i] + "Z" + name[i+1:]})
			if i+2 <= n {
				pairs = append(pairs, pair{name[:i] + "é" + name[i+2:], name[:i] + "è" + name[i+2:]})
			}
		}
		if n > 2 {
			pairs = append(pairs, pair{"p:" + name, "p:" + name[:n-1] + "Z"}, pair{"pp:" + name, "p:" + name}, pair{"p:" + name, "q" + name[1:] + ":" + name[:1]})
		}
	}
	for _, p := range pairs {
		for _, after := range []int{0, 1, 2, 7, 8, 9, 13, 14, 15, 16, 17, 20} {
			doc := `<r xmlns:p="urn:a" xmlns:q="urn:a" xmlns:pp="urn:a"><` + p.start + `></` + p.end + `>` + strings.Repeat(" ", after) + `</r>`
			if after == 20 {
				// The element is the root, its end tag the end of the input.
				doc = `<` + p.start + ` xmlns:p="urn:a" xmlns:q="urn:a" xmlns:pp="urn:a"></` + p.end + `>`
			}
			diff, err := scanAllWays(sc, warm, []byte(doc))
			if diff != "" {
				t.Fatalf("%q: %s", doc, diff)
			}
			if p.start == p.end && err != nil {
				t.Fatalf("ok/%s: Scan(%q) = %v", p.start, doc, err)
			}
			if p.start != p.end && kindOf(err) != KindTagMismatch {
				t.Fatalf("fail/%s-%s: Scan(%q) = %v, want %v", p.start, p.end, doc, err, KindTagMismatch)
			}
		}
	}
}
