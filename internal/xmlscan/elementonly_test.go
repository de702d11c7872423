package xmlscan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// env builds a SOAP envelope of namespace ns from the pieces around its
// Header and Body: pre is before the Header, mid between Header and Body,
// post after the Body, and hdr is the Header's content.
func env(ns, pre, hdr, mid, body, post string) string {
	return `<s:Envelope xmlns:s="` + ns + `">` + pre + `<s:Header>` + hdr + `</s:Header>` + mid +
		`<s:Body>` + body + `</s:Body>` + post + `</s:Envelope>`
}

const (
	blockA = `<a:A xmlns:a="urn:a">1</a:A>`
	blockB = `<b:B xmlns:b="urn:b">2</b:B>`
)

// elementOnlyCases attack the Envelope and Header content rule (issue 13
// item 7): anything but white space there reaches a backend unsigned.
var elementOnlyCases = []scanCase{
	{name: "ok/white-space-everywhere", in: env(NamespaceSOAP11, "\n\t ", "\r\n "+blockA+"\n "+blockB+" ", "\n", "x", "\n")},
	{name: "ok/soap12-white-space", in: env(NamespaceSOAP12, " ", " "+blockA+" ", " ", "x", " ")},
	{name: "ok/text-inside-body", in: env(NamespaceSOAP11, "", blockA, "", "text &#65; <![CDATA[c]]> <!-- c --><p>x</p>", "")},
	{name: "ok/text-inside-header-block", in: env(NamespaceSOAP11, "", `<a:A xmlns:a="urn:a">t&#65;<!-- c --><![CDATA[d]]></a:A>`, "", "x", "")},
	{name: "ok/empty-header", in: env(NamespaceSOAP11, "", "", "", "", "")},
	{name: "ok/empty-element-header", in: `<s:Envelope xmlns:s="` + NamespaceSOAP11 + `"><s:Header/><s:Body/></s:Envelope>`},
	{name: "ok/other-namespace-envelope", in: `<s:Envelope xmlns:s="urn:not-soap">text<!-- c --><s:Header>t</s:Header></s:Envelope>`},
	{name: "ok/header-local-name-elsewhere", in: env(NamespaceSOAP11, "", "", "", `<Header>text</Header>`, "")},

	{name: "fail/text-before-header", in: env(NamespaceSOAP11, "x", "", "", "", ""), kind: KindElementOnly},
	{name: "fail/text-between-header-and-body", in: env(NamespaceSOAP11, "", blockA, " admin=true ", "x", ""), kind: KindElementOnly},
	{name: "fail/text-after-body", in: env(NamespaceSOAP11, "", "", "", "x", "\ntrailer\n"), kind: KindElementOnly},
	{name: "fail/text-between-header-blocks", in: env(NamespaceSOAP11, "", blockA+"x"+blockB, "", "", ""), kind: KindElementOnly},
	{name: "fail/text-in-empty-header", in: env(NamespaceSOAP11, "", "x", "", "", ""), kind: KindElementOnly},
	{name: "fail/soap12-text-between-header-and-body", in: env(NamespaceSOAP12, "", "", "x", "", ""), kind: KindElementOnly},
	{name: "fail/soap12-text-in-header", in: env(NamespaceSOAP12, "", blockA+"x", "", "", ""), kind: KindElementOnly},
	{name: "fail/cdata-fake-body", in: env(NamespaceSOAP11, "", "", `<![CDATA[<soapenv:Body><evil/></soapenv:Body>]]>`, "x", ""), kind: KindElementOnly},
	{name: "fail/cdata-in-header", in: env(NamespaceSOAP11, "", `<![CDATA[ ]]>`, "", "", ""), kind: KindElementOnly},
	{name: "fail/char-ref", in: env(NamespaceSOAP11, "", "", "&#65;", "", ""), kind: KindElementOnly},
	{name: "fail/char-ref-to-space", in: env(NamespaceSOAP11, "", "", "&#32;", "", ""), kind: KindElementOnly},
	{name: "fail/entity-ref", in: env(NamespaceSOAP11, "", "&amp;", "", "", ""), kind: KindElementOnly},
	{name: "fail/nbsp", in: env(NamespaceSOAP11, "", "", "\u00a0", "", ""), kind: KindElementOnly},
	{name: "fail/comment-in-envelope", in: env(NamespaceSOAP11, "", "", "<!-- c -->", "", ""), kind: KindElementOnly},
	{name: "fail/comment-in-header", in: env(NamespaceSOAP11, "", blockA+"<!-- c -->", "", "", ""), kind: KindElementOnly},
	{name: "fail/soap12-comment-in-envelope", in: env(NamespaceSOAP12, "<!---->", "", "", "", ""), kind: KindElementOnly},
	{name: "fail/comment-before-root", in: "<!-- c -->" + env(NamespaceSOAP11, "", "", "", "", ""), kind: KindOutsideRoot},
	{name: "fail/comment-after-root", in: env(NamespaceSOAP11, "", "", "", "", "") + "\n<!-- c -->", kind: KindOutsideRoot},
	{name: "fail/text-in-envelope-without-header", in: `<s:Envelope xmlns:s="` + NamespaceSOAP11 + `">x<s:Body/></s:Envelope>`, kind: KindElementOnly},
	{name: "fail/default-namespace-envelope", in: `<Envelope xmlns="` + NamespaceSOAP12 + `"><Body/>x</Envelope>`, kind: KindElementOnly},
}

func TestElementOnly(t *testing.T) {
	sc, err := NewScanner(DefaultConfig())
	require.NoError(t, err)
	loose, err := NewScanner(Config{NoCommentsIn: []Name{SecurityHeader}})
	require.NoError(t, err)
	for _, tc := range elementOnlyCases {
		t.Run(tc.name, func(t *testing.T) {
			var d Document
			err := sc.Scan([]byte(tc.in), &d)
			if tc.kind == 0 {
				require.NoError(t, err)
				checkSpans(t, &d)
				checkStdlib(t, &d)
				return
			}
			require.ErrorIs(t, err, tc.kind)
			if tc.kind == KindElementOnly {
				// The defense is the option: without it the gate accepts.
				require.NoError(t, loose.Scan([]byte(tc.in), &d))
				assert.Contains(t, err.Error(), "directly inside")
			}
		})
	}
}

// TestElementOnlyOffset points the error at the offending byte, not at the
// white space before it.
func TestElementOnlyOffset(t *testing.T) {
	in := env(NamespaceSOAP11, "", "", "  x", "", "")
	var d Document
	err := Scan([]byte(in), &d)
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, strings.Index(in, "x<s:Body"), e.Offset)
}

func TestElementOnlyConfig(t *testing.T) {
	_, err := NewScanner(Config{ElementOnly: []Name{{Space: "urn:u"}}})
	require.Error(t, err)
	sc, err := NewScanner(Config{ElementOnly: []Name{{Space: "urn:u", Local: "list"}}})
	require.NoError(t, err)
	var d Document
	require.NoError(t, sc.Scan([]byte(`<p:list xmlns:p="urn:u"> <a>t</a> </p:list>`), &d))
	require.ErrorIs(t, sc.Scan([]byte(`<p:list xmlns:p="urn:u"><a/>t</p:list>`), &d), KindElementOnly)
	// The rule is for direct content only: the child's text is its own.
	require.NoError(t, sc.Scan([]byte(`<r xmlns:p="urn:u"><p:list/>t</r>`), &d))
	// The caller's slice is not kept.
	c := DefaultConfig()
	sc, err = NewScanner(c)
	require.NoError(t, err)
	c.ElementOnly[0].Local = "x"
	require.ErrorIs(t, sc.Scan([]byte(env(NamespaceSOAP11, "x", "", "", "", "")), &d), KindElementOnly)
}

// TestListedNameLengths: open skips the NoCommentsIn and ElementOnly
// lookups for local names of a length no listed name has; a listed name
// of any length, 63 bytes and more included, is still found, and another
// name of a listed length is still compared.
func TestListedNameLengths(t *testing.T) {
	long := strings.Repeat("n", 70)
	s, err := NewScanner(Config{
		NoCommentsIn: []Name{{Space: "urn:x", Local: "a"}, {Space: "urn:x", Local: long}},
		ElementOnly:  []Name{{Space: "urn:x", Local: "bb"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, doc string
		kind      Kind // 0: passes
	}{
		{"fail/short", `<x:a xmlns:x="urn:x"><!-- c --></x:a>`, KindProtectedComment},
		{"fail/long", `<x:` + long + ` xmlns:x="urn:x"><!-- c --></x:` + long + `>`, KindProtectedComment},
		{"fail/element-only", `<x:bb xmlns:x="urn:x">text</x:bb>`, KindElementOnly},
		{"ok/other-space", `<y:a xmlns:y="urn:y"><!-- c --></y:a>`, 0},
		{"ok/same-length", `<x:c xmlns:x="urn:x"><!-- c -->text</x:c>`, 0},
		{"ok/longer-than-63", `<x:` + long + `m xmlns:x="urn:x"><!-- c --></x:` + long + `m>`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d Document
			if got := kindOf(s.Scan([]byte(tc.doc), &d)); got != tc.kind {
				t.Errorf("kind %v, want %v", got, tc.kind)
			}
		})
	}
}
