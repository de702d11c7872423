package xmlscan

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// ScanReplace must give exactly what Scan gives on the spliced bytes: the
// same Document field by field, or the same error (kind, offset, detail).
// These tests and FuzzScanReplace compare the two on every input.

// docDiff describes the first difference between two Documents, or "".
func docDiff(got, want *Document) string {
	type field struct {
		name      string
		got, want any
	}
	for _, f := range []field{
		{"Data", got.Data, want.Data}, {"BOM", got.BOM, want.BOM}, {"Decl", got.Decl, want.Decl},
		{"HasCR", got.HasCR, want.HasCR},
		{"counts", [5]int{got.References, got.Transforms, got.Signatures, got.EncryptedKeys, got.EncryptedData},
			[5]int{want.References, want.Transforms, want.Signatures, want.EncryptedKeys, want.EncryptedData}},
	} {
		if !reflect.DeepEqual(f.got, f.want) {
			return fmt.Sprintf("%s: got %v, want %v", f.name, f.got, f.want)
		}
	}
	if len(got.Elements) != len(want.Elements) {
		return fmt.Sprintf("%d elements, want %d", len(got.Elements), len(want.Elements))
	}
	for k := range want.Elements {
		if got.Elements[k] != want.Elements[k] {
			return fmt.Sprintf("element %d: got %+v, want %+v", k, got.Elements[k], want.Elements[k])
		}
	}
	for _, f := range []field{{"Attrs", got.Attrs, want.Attrs}, {"NSDecls", got.NSDecls, want.NSDecls}, {"Misc", got.Misc, want.Misc}} {
		g, w := reflect.ValueOf(f.got), reflect.ValueOf(f.want)
		if g.Len() != w.Len() {
			return fmt.Sprintf("%s: %d, want %d", f.name, g.Len(), w.Len())
		}
		for k := range w.Len() {
			if !reflect.DeepEqual(g.Index(k).Interface(), w.Index(k).Interface()) {
				return fmt.Sprintf("%s[%d]: got %+v, want %+v", f.name, k, g.Index(k).Interface(), w.Index(k).Interface())
			}
		}
	}
	return ""
}

// replaceOutcome runs ScanReplace and Scan on element i of doc replaced by
// frag, and reports their difference ("" when they agree), whether
// ScanReplace fell back to the whole scan, and the verdict.
func replaceOutcome(sc *Scanner, old *Document, i int, frag []byte) (diff string, whole bool, err error) {
	el := old.Elements[i]
	data := append(append(append([]byte{}, old.Data[:el.Start]...), frag...), old.Data[el.End:]...)
	var want, got Document
	werr := sc.Scan(data, &want)
	whole, gerr := sc.scanReplace(old, i, frag, &got)
	switch {
	case (werr == nil) != (gerr == nil):
		return fmt.Sprintf("error %v, want %v", gerr, werr), whole, gerr
	case werr != nil:
		if !reflect.DeepEqual(gerr, werr) {
			return fmt.Sprintf("error %v, want %v", gerr, werr), whole, gerr
		}
		return "", whole, gerr
	}
	return docDiff(&got, &want), whole, nil
}

// replaceEnvelope has an EncryptedData in the Body (element 8) and one in
// a wsse11:EncryptedHeader in the Security header (element 4), with
// prefixes the plaintext may use or redeclare and text around the first.
const replaceEnvelope = `<?xml version="1.0" encoding="UTF-8"?>
<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/" xmlns:p="urn:outer" xmlns="urn:default">` +
	`<s:Header><wsse:Security xmlns:wsse="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd">` +
	`<wsse11:EncryptedHeader xmlns:wsse11="http://docs.oasis-open.org/wss/oasis-wss-wssecurity-secext-1.1.xsd">` +
	`<xenc:EncryptedData xmlns:xenc="http://www.w3.org/2001/04/xmlenc#" Id="EH"><xenc:CipherData/></xenc:EncryptedData>` +
	`</wsse11:EncryptedHeader><t>x</t></wsse:Security></s:Header>` +
	"<s:Body p:a=\"1\">\n  <xenc:EncryptedData xmlns:xenc=\"http://www.w3.org/2001/04/xmlenc#\" Id=\"ED\"/>\n  tail &amp; <after/>\n</s:Body></s:Envelope>\n"

func TestScanReplace(t *testing.T) {
	sc, err := NewScanner(DefaultConfig())
	require.NoError(t, err)
	var old Document
	require.NoError(t, sc.Scan([]byte(replaceEnvelope), &old))
	require.Equal(t, "EncryptedData", old.Elements[4].Local)
	require.Equal(t, "EncryptedData", old.Elements[8].Local)
	const body, header = 8, 4
	for _, tc := range []struct {
		name  string
		i     int
		frag  string
		whole bool // the fragment path cannot decide
		fail  Kind
	}{
		{name: "ok/element", i: body, frag: `<p:op xmlns:p="urn:inner"><p:x a="1">v</p:x></p:op>`},
		{name: "ok/content with text around", i: body, frag: "\n    <op>a &lt; b</op>\n  "},
		{name: "ok/content text only", i: body, frag: "just text"},
		{name: "ok/empty content", i: body, frag: ""},
		{name: "ok/default namespace inherited and undeclared", i: body, frag: `<op><in xmlns=""><deep/></in></op>`},
		{name: "ok/prefix redeclared", i: body, frag: `<s:op xmlns:s="urn:not-soap"><p:x xmlns:p="urn:p2"/></s:op>`},
		{name: "ok/comment and CDATA", i: body, frag: "<op><!-- c --><![CDATA[<x>]]></op><!--top-->"},
		{name: "ok/several elements", i: body, frag: "<a/><b>1</b>\n<c/>"},
		{name: "ok/CR in plaintext", i: body, frag: "<op>\r\n</op>"},
		{name: "ok/reference in attribute", i: body, frag: `<op a="&#x9;"/>`},
		{name: "ok/header block", i: header, frag: `<h:Block xmlns:h="urn:h" wsse:x="1">v</h:Block>`},
		{name: "ok/signature counted", i: body, frag: `<ds:Signature xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:Reference/></ds:Signature>`},
		{name: "fail/markup reaching past frag", i: body, frag: "<op/>\n  tail &amp; <after", fail: KindSyntax},
		{name: "fail/undeclared prefix", i: body, frag: `<q:op/>`, fail: KindUndeclaredPrefix},
		{name: "fail/duplicate attribute through the outer prefix", i: body, frag: `<op xmlns:o="urn:outer" p:a="1" o:a="2"/>`, fail: KindDuplicateAttr},
		{name: "fail/comment in the Security header", i: header, frag: `<h xmlns="urn:h"><!-- c --></h>`, fail: KindProtectedComment},
		{name: "fail/doctype", i: body, frag: `<!DOCTYPE x>`, fail: KindDoctype},
		{name: "fail/processing instruction", i: body, frag: `<?pi x?>`, fail: KindPI},
		{name: "fail/bad reference", i: body, frag: `<op>&bogus;</op>`, fail: KindBadReference},
		{name: "fail/control character", i: body, frag: "<op>\x01</op>", whole: true, fail: KindIllegalChar},
		{name: "fail/invalid UTF-8 at the end", i: body, frag: "<op/>\xc3", whole: true, fail: KindInvalidUTF8},
		{name: "fail/unclosed element", i: body, frag: `<op>`, whole: true, fail: KindTagMismatch},
		{name: "ok/closes the parent (whole scan)", i: body, frag: `</s:Body><s:Body>`, whole: true},
		{name: "fail/stray end tag", i: body, frag: `</op>`, whole: true, fail: KindTagMismatch},
		{name: "ok/text ending in ]]", i: body, frag: "x]]"},
		{name: "fail/CDATA end across the start", i: body, frag: "<op/>]]>", fail: KindCDATAEnd},
		{name: "ok/text in the EncryptedHeader", i: header, frag: `<h xmlns="urn:h"/>text`},
		{name: "fail/xml declaration", i: body, frag: `<?xml version="1.0"?><op/>`, fail: KindPI},
		{name: "fail/unterminated comment", i: body, frag: `<!--`, fail: KindEOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			diff, whole, err := replaceOutcome(sc, &old, tc.i, []byte(tc.frag))
			require.Empty(t, diff)
			require.Equal(t, tc.whole, whole, "whole-document fallback (err %v)", err)
			if tc.fail != 0 {
				require.ErrorIs(t, err, tc.fail)
			} else if strings.HasPrefix(tc.name, "ok/") {
				require.NoError(t, err)
			}
		})
	}
}

// TestScanReplaceLimits crosses each whole-document limit inside the
// fragment (the fragment path reports it) and after it (the totals send
// the decision to the whole scan), with a scanner whose limits sit just
// above the envelope's own counts.
func TestScanReplaceLimits(t *testing.T) {
	var base Document
	require.NoError(t, Scan([]byte(replaceEnvelope), &base))
	elems, ns := len(base.Elements), len(base.NSDecls)
	const body = 8
	many := func(n int, s string) string { return strings.Repeat(s, n) }
	for _, tc := range []struct {
		name  string
		lim   Limits
		i     int
		frag  string
		whole bool
		fail  Kind
	}{
		{name: "ok/elements at the limit", lim: Limits{MaxElements: elems + 2}, i: body, frag: "<a/><b/><c/>"},
		{name: "fail/elements", lim: Limits{MaxElements: elems + 2}, i: body, frag: "<a/><b/><c/><d/><e/>", fail: KindLimitElements},
		{name: "fail/elements after the fragment", lim: Limits{MaxElements: elems + 2}, i: 4, frag: "<a xmlns='u'><b/><c/><d/><e/></a>", whole: true, fail: KindLimitElements},
		{name: "fail/namespace declarations", lim: Limits{MaxNSDecls: ns + 1}, i: body, frag: `<a xmlns="u1"><b xmlns="u2"><c xmlns="u3"/></b></a>`, fail: KindLimitNSDecls},
		{name: "fail/namespace declarations after the fragment", lim: Limits{MaxNSDecls: ns}, i: 4, frag: `<a xmlns="u1"><b xmlns="u2"/></a>`, whole: true, fail: KindLimitNSDecls},
		{name: "fail/depth", lim: Limits{MaxDepth: 6}, i: body, frag: "<a><b><c><d><e/></d></c></b></a>", fail: KindLimitDepth},
		{name: "fail/text run across the fragment's end", lim: Limits{MaxTextLen: 40}, i: body, frag: "<a/>" + many(25, "x") + "<b/>", fail: KindLimitText},
		{name: "fail/text", lim: Limits{MaxTextLen: 40}, i: body, frag: many(30, "x"), fail: KindLimitText},
		{name: "fail/text with the tail", lim: Limits{MaxTextLen: 40}, i: body, frag: "<a/>" + many(23, "x") + "<b/>", whole: true, fail: KindLimitText},
		{name: "ok/text at the limit", lim: Limits{MaxTextLen: 40}, i: body, frag: "<a/>" + many(22, "x") + "<b/>"},
		{name: "fail/references", lim: Limits{MaxReferences: 1}, i: body, frag: many(2, `<ds:Reference xmlns:ds="http://www.w3.org/2000/09/xmldsig#"/>`), fail: KindLimitReferences},
		{name: "fail/encrypted data after the fragment", lim: Limits{MaxEncryptedData: 2}, i: 4, frag: many(2, `<xenc:EncryptedData xmlns:xenc="http://www.w3.org/2001/04/xmlenc#"/>`), whole: true, fail: KindLimitEncryptedData},
		{name: "fail/bytes", lim: Limits{MaxBytes: len(replaceEnvelope) + 10}, i: body, frag: many(200, "x"), whole: true, fail: KindLimitBytes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Limits = tc.lim
			sc, err := NewScanner(cfg)
			require.NoError(t, err)
			var old Document
			require.NoError(t, sc.Scan([]byte(replaceEnvelope), &old))
			diff, whole, err := replaceOutcome(sc, &old, tc.i, []byte(tc.frag))
			require.Empty(t, diff)
			require.Equal(t, tc.whole, whole, "whole-document fallback (err %v)", err)
			if tc.fail != 0 {
				require.ErrorIs(t, err, tc.fail)
			} else {
				require.NoError(t, err)
			}
		})
	}
}

// TestScanReplaceChained replaces twice, the second time in the result of
// the first, as the DOM engine does with several EncryptedData.
func TestScanReplaceChained(t *testing.T) {
	var old, mid, got, want Document
	require.NoError(t, Scan([]byte(replaceEnvelope), &old))
	require.NoError(t, defaultScanner.ScanReplace(&old, 8, []byte("<op xmlns:x='urn:x'><x:in/></op>"), &mid))
	require.NoError(t, defaultScanner.ScanReplace(&mid, 4, []byte("<h:B xmlns:h='urn:h'/>"), &got))
	require.NoError(t, Scan(got.Data, &want))
	require.Empty(t, docDiff(&got, &want))
}

// TestScanReplaceRandom is a deterministic differential run over
// fragments assembled from tokens chosen to land on the fragment path's
// edges (text runs across both ends, markup reaching past the fragment,
// unbalanced tags, prefixes, references, comments, CDATA, CR, bad
// UTF-8), replacing every element of the envelope, with the default and
// with tight limits.
func TestScanReplaceRandom(t *testing.T) {
	tokens := []string{"<a>", "</a>", "<b/>", "text", "&amp;", "&#x9;", "]]", ">", "<!--", "-->", "<![CDATA[", "]]>",
		"<s:x>", "</s:x>", "<p:y p:a='1'/>", "\r\n", " ", "<?pi?>", "\xc3", "<c xmlns:q='urn:q'><q:d/></c>", "<q:e/>",
		"<e xmlns=''/>", "</s:Body>", "<s:Body>", "<ds:Reference xmlns:ds='http://www.w3.org/2000/09/xmldsig#'/>",
		"<xenc:EncryptedData xmlns:xenc='http://www.w3.org/2001/04/xmlenc#'/>", "xxxxxxxxxxxxxxxxxxxxxxxx", "<f a='&lt;'/>"}
	def, err := NewScanner(DefaultConfig())
	require.NoError(t, err)
	tight := DefaultConfig()
	tight.Limits = Limits{MaxElements: 14, MaxNSDecls: 9, MaxTextLen: 40, MaxDepth: 7, MaxReferences: 1, MaxEncryptedData: 2}
	small, err := NewScanner(tight)
	require.NoError(t, err)
	var olds [2]Document
	for k, sc := range []*Scanner{def, small} {
		require.NoError(t, sc.Scan([]byte(replaceEnvelope), &olds[k]))
	}
	rnd := uint64(1)
	next := func(n int) int {
		rnd ^= rnd << 13
		rnd ^= rnd >> 7
		rnd ^= rnd << 17
		return int(rnd % uint64(n))
	}
	fragPath := 0
	for range 4000 {
		var frag strings.Builder
		for range next(7) {
			frag.WriteString(tokens[next(len(tokens))])
		}
		k := next(2)
		sc := []*Scanner{def, small}[k]
		i := 1 + next(len(olds[k].Elements)-1)
		diff, whole, _ := replaceOutcome(sc, &olds[k], i, []byte(frag.String()))
		require.Empty(t, diff, "element %d replaced by %q (tight %v)", i, frag.String(), k == 1)
		if !whole {
			fragPath++
		}
	}
	// Most fragments must take the fragment path, or this tests the
	// fallback only.
	require.Greater(t, fragPath, 2000)
}

// FuzzScanReplace replaces one element of a gated document by arbitrary
// bytes and requires ScanReplace to agree with Scan of the result, with
// the default limits and with tight ones (so that limits are crossed
// inside and after the fragment).
func FuzzScanReplace(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.xml"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		require.NoError(f, err)
		f.Add(b, []byte("<op xmlns='urn:x'>v</op>"), uint16(3), false)
	}
	for _, frag := range []string{"", "text", "\n<a/>\n", "<a>", "</b>", "<!--", "]]>", "<![CDATA[x]]>", "&amp;", "<s:x/>", "<a xmlns:s='u'><s:b/></a>"} {
		f.Add([]byte(replaceEnvelope), []byte(frag), uint16(8), false)
		f.Add([]byte(replaceEnvelope), []byte(frag), uint16(4), true)
	}
	def, err := NewScanner(DefaultConfig())
	require.NoError(f, err)
	tight := DefaultConfig()
	tight.Limits = Limits{MaxElements: 40, MaxNSDecls: 12, MaxTextLen: 64, MaxDepth: 8, MaxReferences: 2, MaxEncryptedData: 3, MaxBytes: 4096}
	small, err := NewScanner(tight)
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, doc, frag []byte, pick uint16, useTight bool) {
		sc := def
		if useTight {
			sc = small
		}
		var old Document
		if sc.Scan(doc, &old) != nil || len(old.Elements) < 2 {
			return
		}
		i := 1 + int(pick)%(len(old.Elements)-1)
		diff, _, _ := replaceOutcome(sc, &old, i, frag)
		require.Empty(t, diff, "element %d replaced by %q", i, frag)
	})
}

// BenchmarkScanReplace compares splicing a plaintext fragment into a
// gated message with scanning the whole spliced message again.
func BenchmarkScanReplace(b *testing.B) {
	var old Document
	require.NoError(b, Scan([]byte(replaceEnvelope), &old))
	for _, n := range []int{40, 2000, 20000} {
		var frag bytes.Buffer
		frag.WriteString("<op xmlns='urn:x'>")
		for k := range n {
			fmt.Fprintf(&frag, "\n<item sku=\"S-%d\" qty=\"1\">Widget &amp; %d</item>", k, k)
		}
		frag.WriteString("</op>")
		el := old.Elements[8]
		data := append(append(append([]byte{}, old.Data[:el.Start]...), frag.Bytes()...), old.Data[el.End:]...)
		var d Document
		b.Run(fmt.Sprintf("replace/%dB", frag.Len()), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := defaultScanner.ScanReplace(&old, 8, frag.Bytes(), &d); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("whole/%dB", frag.Len()), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				copied := append([]byte(nil), data...) // the splice copies too
				if err := defaultScanner.Scan(copied, &d); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
