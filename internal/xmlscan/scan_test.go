package xmlscan

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type scanCase struct {
	name string
	in   string
	kind Kind // 0 for ok/ cases
}

const wsuNS = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd"

// secHeader wraps inner in a SOAP 1.1 envelope's wsse:Security header.
func secHeader(inner string) string {
	return `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Header>` +
		`<wsse:Security xmlns:wsse="` + NamespaceWSSE + `">` + inner + `</wsse:Security>` +
		`</s:Header><s:Body><!-- a comment in the body is fine --><p>x</p></s:Body></s:Envelope>`
}

var okCases = []scanCase{
	{name: "ok/minimal", in: `<r/>`},
	{name: "ok/decl", in: `<?xml version="1.0" encoding="UTF-8" standalone="no"?><r/>`},
	{name: "ok/decl-single-quotes-lowercase-encoding", in: "<?xml version='1.0' encoding='utf-8'?>\n<r/>\n"},
	{name: "ok/decl-spaces-around-eq", in: `<?xml version = "1.0"  ?><r></r>`},
	{name: "ok/decl-version-only", in: `<?xml version="1.0"?><r/>`},
	{name: "ok/utf8-bom", in: "\xEF\xBB\xBF<?xml version=\"1.0\"?><r/>"},
	{name: "ok/utf8-bom-no-decl", in: "\xEF\xBB\xBF<r/>"},
	{name: "ok/whitespace-around-root", in: " \t\r\n<r>\n</r>\r\n "},
	{name: "ok/end-tag-with-space", in: "<r></r \n>"},
	{name: "ok/attr-space-around-eq", in: "<r a = '1'\tb\n=\r\n\"2\" />"},
	{name: "ok/predefined-entities", in: `<r a="&lt;&gt;&amp;&apos;&quot;">&lt;&gt;&amp;&apos;&quot;</r>`},
	{name: "ok/char-refs", in: `<r a="&#9;&#xA;">&#65;&#x42;&#x1F600;&#xD7FF;&#xE000;&#xFFFD;&#x10FFFF;&#0000065;</r>`},
	{name: "ok/comment-and-cdata-in-content", in: `<r><!-- c --><a/><![CDATA[<x>&amp;]]>t</r>`},
	{name: "ok/empty-comment", in: `<r><!----><!-- - --></r>`},
	{name: "ok/gt-in-text", in: `<r>a > b ]] > c ]></r>`},
	{name: "ok/cdata-end-in-attr", in: `<r a="]]>"/>`},
	{name: "ok/quotes-in-attr", in: `<r a="it's" b='say "x"'/>`},
	{name: "ok/xml-lang", in: `<r xml:lang="en" xml:space="preserve"/>`},
	{name: "ok/xml-prefix-declared-to-itself", in: `<r xmlns:xml="http://www.w3.org/XML/1998/namespace" xml:lang="en"/>`},
	{name: "ok/default-ns-undeclared", in: `<r xmlns="urn:u"><a xmlns=""><b/></a></r>`},
	{name: "ok/same-local-different-ns", in: `<r xmlns:a="urn:u" xmlns:b="urn:v" a:x="1" b:x="2" x="3"/>`},
	{name: "ok/prefixed-and-unprefixed-same-local", in: `<r xmlns:a="urn:u" a:x="1" x="2"/>`},
	{name: "ok/prefix-rebound-inside", in: `<p:r xmlns:p="urn:u"><p:a xmlns:p="urn:v"/><p:b/></p:r>`},
	{name: "ok/decl-after-use", in: `<r p:a="1" xmlns:p="urn:u"/>`},
	{name: "ok/ref-in-ns-uri", in: `<r xmlns:p="urn:a?x=1&amp;y=2"><p:a/></r>`},
	{name: "ok/many-attrs", in: `<r a1="" a2="" a3="" a4="" a5="" a6="" a7="" a8="" a9="" a10="" xmlns:p="urn:u" p:a1=""/>`},
	{name: "ok/unicode-names", in: `<straße größe="1"><документ/><a·b/></straße>`},
	{name: "ok/unicode-text", in: "<r a=\"\u00e9\u20ac\U0001F600\">\u00e9\u20ac\U0001F600\u0085\u2028</r>"},
	{name: "ok/crlf", in: "<r a=\"x\r\ny\rz\">\r\nline\rtwo\r\n</r>"},
	{name: "ok/names-with-dots-dashes", in: `<a.b-c_d xmlns:x-y.z="urn:u" x-y.z:e.f="1"/>`},
	{name: "ok/comment-in-body-with-security", in: secHeader(`<wsu:Timestamp xmlns:wsu="` + wsuNS + `"/>`)},
	{name: "ok/nested", in: `<a><b><c>t</c><c/></b>t<b/></a>`},
}

var failCases = []scanCase{
	// DTDs and markup declarations (security.md B1, B2).
	{name: "fail/doctype", in: `<!DOCTYPE r><r/>`, kind: KindDoctype},
	{name: "fail/doctype-lowercase", in: `<!doctype r><r/>`, kind: KindDoctype},
	{name: "fail/doctype-after-decl", in: `<?xml version="1.0"?>` + "\n" + `<!DOCTYPE r SYSTEM "http://evil/"><r/>`, kind: KindDoctype},
	{name: "fail/xxe", in: `<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><r>&x;</r>`, kind: KindDoctype},
	{name: "fail/billion-laughs", in: `<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;"><!ENTITY lol2 "&lol1;&lol1;&lol1;">]><lolz>&lol2;</lolz>`, kind: KindDoctype},
	{name: "fail/doctype-after-root", in: `<r/><!DOCTYPE r>`, kind: KindDoctype},
	{name: "fail/doctype-in-content", in: `<r><!DOCTYPE r></r>`, kind: KindDoctype},
	{name: "fail/entity-decl-in-content", in: `<r><!ENTITY x "y"></r>`, kind: KindDirective},
	{name: "fail/attlist-before-root", in: `<!ATTLIST r a CDATA "x"><r/>`, kind: KindDirective},
	{name: "fail/conditional-section", in: `<r><![INCLUDE[x]]></r>`, kind: KindDirective},
	{name: "fail/bad-bang", in: `<r><!1></r>`, kind: KindSyntax},
	{name: "fail/lowercase-directive", in: `<r><!entity x "y"></r>`, kind: KindDirective},
	{name: "fail/bad-comment-open", in: `<r><!-x--></r>`, kind: KindSyntax},
	// Processing instructions and XML declarations (B3).
	{name: "fail/pi-in-content", in: `<r><?php echo 1 ?></r>`, kind: KindPI},
	{name: "fail/pi-before-root", in: `<?pi x?><r/>`, kind: KindPI},
	{name: "fail/pi-after-root", in: `<r/><?pi x?>`, kind: KindPI},
	{name: "fail/xml-stylesheet-pi", in: `<?xml-stylesheet href="a"?><r/>`, kind: KindPI},
	{name: "fail/xml-decl-not-at-start", in: ` <?xml version="1.0"?><r/>`, kind: KindPI},
	{name: "fail/xml-decl-twice", in: `<?xml version="1.0"?><?xml version="1.0"?><r/>`, kind: KindPI},
	{name: "fail/xml-decl-after-root", in: `<r/><?xml version="1.0"?>`, kind: KindPI},
	{name: "fail/xml-decl-in-content", in: `<r><?xml version="1.0"?></r>`, kind: KindPI},
	{name: "fail/xml-version-1.1", in: `<?xml version="1.1"?><r/>`, kind: KindXMLDecl},
	{name: "fail/xml-decl-missing-version", in: `<?xml encoding="UTF-8"?><r/>`, kind: KindXMLDecl},
	{name: "fail/xml-decl-empty", in: `<?xml?><r/>`, kind: KindXMLDecl},
	{name: "fail/xml-decl-bad-standalone", in: `<?xml version="1.0" standalone="maybe"?><r/>`, kind: KindXMLDecl},
	{name: "fail/xml-decl-unknown-pseudo-attr", in: `<?xml version="1.0" foo="bar"?><r/>`, kind: KindXMLDecl},
	{name: "fail/xml-decl-wrong-order", in: `<?xml version="1.0" standalone="yes" encoding="UTF-8"?><r/>`, kind: KindXMLDecl},
	{name: "fail/xml-decl-no-space", in: `<?xml version="1.0"encoding="UTF-8"?><r/>`, kind: KindXMLDecl},
	{name: "fail/xml-decl-truncated", in: `<?xml version="1.0"`, kind: KindEOF},
	// Encodings (B6).
	{name: "fail/utf16-decl", in: `<?xml version="1.0" encoding="UTF-16"?><r/>`, kind: KindEncoding},
	{name: "fail/latin1-decl", in: `<?xml version='1.0' encoding='ISO-8859-1'?><r/>`, kind: KindEncoding},
	{name: "fail/utf16-decl-after-bom", in: "\xEF\xBB\xBF<?xml version=\"1.0\" encoding=\"utf-16\"?><r/>", kind: KindEncoding},
	{name: "fail/utf16le-bom", in: "\xFF\xFE<\x00r\x00/\x00>\x00", kind: KindBOM},
	{name: "fail/utf16be-bom", in: "\xFE\xFF\x00<\x00r\x00/\x00>", kind: KindBOM},
	{name: "fail/utf32-bom", in: "\x00\x00\xFE\xFF\x00\x00\x00<", kind: KindBOM},
	{name: "fail/utf16-no-bom", in: "\x00<\x00r\x00/\x00>", kind: KindEncoding},
	{name: "fail/double-utf8-bom", in: "\xEF\xBB\xBF\xEF\xBB\xBF<r/>", kind: KindOutsideRoot},
	{name: "fail/bad-utf8", in: "<r>\xFF</r>", kind: KindInvalidUTF8},
	{name: "fail/bad-utf8-overlong", in: "<r>\xC0\xAF</r>", kind: KindInvalidUTF8},
	{name: "fail/bad-utf8-surrogate", in: "<r>\xED\xA0\x80</r>", kind: KindInvalidUTF8},
	{name: "fail/bad-utf8-truncated", in: "<r>\xE2\x82</r>", kind: KindInvalidUTF8},
	{name: "fail/bad-utf8-in-name", in: "<r\xFF/>", kind: KindInvalidUTF8},
	{name: "fail/bad-utf8-in-attr", in: "<r a=\"\xC3\"/>", kind: KindInvalidUTF8},
	// Illegal characters, literal and referenced (XML 1.0 §2.2, WFC: Legal Character).
	{name: "fail/control-char-in-text", in: "<r>\x01</r>", kind: KindIllegalChar},
	{name: "fail/nul-in-text", in: "<r>\x00</r>", kind: KindIllegalChar},
	{name: "fail/control-char-in-attr", in: "<r a=\"\x0B\"/>", kind: KindIllegalChar},
	{name: "fail/control-char-in-comment", in: "<r><!--\x01--></r>", kind: KindIllegalChar},
	{name: "fail/literal-fffe", in: "<r>\xEF\xBF\xBE</r>", kind: KindIllegalChar},
	{name: "fail/char-ref-0", in: `<r>&#0;</r>`, kind: KindIllegalChar},
	{name: "fail/char-ref-x0", in: `<r>&#x0;</r>`, kind: KindIllegalChar},
	{name: "fail/char-ref-control", in: `<r a="&#1;"/>`, kind: KindIllegalChar},
	{name: "fail/char-ref-surrogate", in: `<r>&#xD800;</r>`, kind: KindIllegalChar},
	{name: "fail/char-ref-fffe", in: `<r>&#xFFFE;</r>`, kind: KindIllegalChar},
	{name: "fail/char-ref-too-big", in: `<r>&#x110000;</r>`, kind: KindIllegalChar},
	{name: "fail/char-ref-overflow", in: `<r>&#99999999999999999999999;</r>`, kind: KindIllegalChar},
	// References (WFC: Entity Declared, §4.1).
	{name: "fail/unknown-entity", in: `<r>&foo;</r>`, kind: KindBadReference},
	{name: "fail/unknown-entity-in-attr", in: `<r a="&nbsp;"/>`, kind: KindBadReference},
	{name: "fail/entity-no-semicolon", in: `<r>&amp</r>`, kind: KindBadReference},
	{name: "fail/bare-ampersand", in: `<r>a & b</r>`, kind: KindBadReference},
	{name: "fail/bare-ampersand-in-attr", in: `<r a="a&b"/>`, kind: KindBadReference},
	{name: "fail/char-ref-empty", in: `<r>&#;</r>`, kind: KindBadReference},
	{name: "fail/char-ref-empty-hex", in: `<r>&#x;</r>`, kind: KindBadReference},
	{name: "fail/char-ref-uppercase-x", in: `<r>&#X41;</r>`, kind: KindBadReference},
	{name: "fail/char-ref-bad-digit", in: `<r>&#12a;</r>`, kind: KindBadReference},
	{name: "fail/ampersand-at-end-of-text", in: `<r>&</r>`, kind: KindBadReference},
	{name: "fail/bad-ref-in-ns-decl", in: `<r xmlns:p="urn:&x;"/>`, kind: KindBadReference},
	// Attributes.
	{name: "fail/lt-in-attr", in: `<r a="<"/>`, kind: KindLtInAttr},
	{name: "fail/lt-in-attr-single-quote", in: `<r a='x<y'/>`, kind: KindLtInAttr},
	{name: "fail/duplicate-attr", in: `<r a="1" a="2"/>`, kind: KindDuplicateAttr},
	{name: "fail/duplicate-wsu-id", in: `<r xmlns:wsu="` + wsuNS + `" wsu:Id="good" wsu:Id="evil"/>`, kind: KindDuplicateAttr},
	{name: "fail/duplicate-attr-via-two-prefixes", in: `<r xmlns:a="urn:u" xmlns:b="urn:u" a:Id="good" b:Id="evil"/>`, kind: KindDuplicateAttr},
	{name: "fail/duplicate-attr-via-inherited-prefixes", in: `<r xmlns:a="urn:u"><e xmlns:b="urn:u" b:Id="1" a:Id="2"/></r>`, kind: KindDuplicateAttr},
	{name: "fail/duplicate-attr-many", in: `<r xmlns:a="urn:u" xmlns:b="urn:u" c1="" c2="" c3="" c4="" c5="" c6="" c7="" c8="" a:x="" c9="" b:x=""/>`, kind: KindDuplicateAttr},
	{name: "fail/duplicate-ns-decl", in: `<r xmlns:a="urn:u" xmlns:a="urn:u"/>`, kind: KindDuplicateAttr},
	{name: "fail/duplicate-default-ns-decl", in: `<r xmlns="urn:u" xmlns="urn:v"/>`, kind: KindDuplicateAttr},
	{name: "fail/missing-space-between-attrs", in: `<r a="1"b="2"/>`, kind: KindSyntax},
	{name: "fail/unquoted-attr", in: `<r a=1/>`, kind: KindSyntax},
	{name: "fail/attr-without-value", in: `<r a/>`, kind: KindSyntax},
	{name: "fail/attr-missing-eq", in: `<r a "1"/>`, kind: KindSyntax},
	{name: "fail/slash-without-gt", in: `<r / >`, kind: KindSyntax},
	// Names and namespaces (B5).
	{name: "fail/undeclared-element-prefix", in: `<p:r/>`, kind: KindUndeclaredPrefix},
	{name: "fail/undeclared-attr-prefix", in: `<r p:a="1"/>`, kind: KindUndeclaredPrefix},
	{name: "fail/prefix-out-of-scope", in: `<r><a xmlns:p="urn:u"/><p:b/></r>`, kind: KindUndeclaredPrefix},
	{name: "fail/xmlns-xml-rebinding", in: `<r xmlns:xml="urn:evil"/>`, kind: KindReservedNamespace},
	{name: "fail/xml-namespace-other-prefix", in: `<r xmlns:x="http://www.w3.org/XML/1998/namespace"/>`, kind: KindReservedNamespace},
	{name: "fail/xml-namespace-as-default", in: `<r xmlns="http://www.w3.org/XML/1998/namespace"/>`, kind: KindReservedNamespace},
	{name: "fail/xmlns-prefix-declared", in: `<r xmlns:xmlns="urn:u"/>`, kind: KindReservedNamespace},
	{name: "fail/xmlns-namespace-bound", in: `<r xmlns:p="http://www.w3.org/2000/xmlns/"/>`, kind: KindReservedNamespace},
	{name: "fail/xmlns-namespace-as-default", in: `<r xmlns="http://www.w3.org/2000/xmlns/"/>`, kind: KindReservedNamespace},
	{name: "fail/element-xmlns-prefix", in: `<xmlns:r/>`, kind: KindReservedNamespace},
	{name: "fail/element-named-xmlns", in: `<xmlns/>`, kind: KindReservedNamespace},
	{name: "fail/prefix-undeclaring", in: `<r xmlns:p="urn:u"><a xmlns:p=""/></r>`, kind: KindInvalidNamespace},
	{name: "fail/whitespace-in-ns-uri", in: `<r xmlns="urn:a b"/>`, kind: KindInvalidNamespace},
	{name: "fail/tab-in-ns-uri", in: "<r xmlns:p=\"urn:a\tb\"/>", kind: KindInvalidNamespace},
	{name: "fail/charref-space-in-ns-uri", in: `<r xmlns:p="urn:a&#x20;b"/>`, kind: KindInvalidNamespace},
	{name: "fail/empty-attr-name", in: `<r :="v"/>`, kind: KindInvalidName},
	{name: "fail/empty-attr-local", in: `<r x:="v"/>`, kind: KindInvalidName},
	{name: "fail/empty-xmlns-local", in: `<r xmlns:="v"/>`, kind: KindInvalidName},
	{name: "fail/double-colon", in: `<a::b/>`, kind: KindInvalidName},
	{name: "fail/two-colons", in: `<a:b:c xmlns:a="urn:u"/>`, kind: KindInvalidName},
	{name: "fail/leading-colon", in: `<:r/>`, kind: KindInvalidName},
	{name: "fail/trailing-colon", in: `<r:/>`, kind: KindInvalidName},
	{name: "fail/name-starts-with-digit", in: `<1r/>`, kind: KindInvalidName},
	{name: "fail/local-starts-with-digit", in: `<p:1r xmlns:p="urn:u"/>`, kind: KindInvalidName},
	{name: "fail/attr-starts-with-dash", in: `<r -a="1"/>`, kind: KindInvalidName},
	{name: "fail/nbsp-in-name", in: "<r\u00A0a='1'/>", kind: KindInvalidName},
	{name: "fail/name-char-unknown-to-encoding-xml", in: "<\u0220/>", kind: KindInvalidName},
	{name: "fail/name-starts-with-combining", in: "<\u0300r/>", kind: KindInvalidName},
	{name: "fail/space-before-name", in: `< r/>`, kind: KindSyntax},
	{name: "fail/lt-in-text", in: `<r>a < b</r>`, kind: KindSyntax},
	// Structure (B3).
	{name: "fail/empty", in: ``, kind: KindNoRoot},
	{name: "fail/only-whitespace", in: " \n", kind: KindNoRoot},
	{name: "fail/only-decl", in: `<?xml version="1.0"?>`, kind: KindNoRoot},
	{name: "fail/second-root", in: `<r/><r/>`, kind: KindMultipleRoots},
	{name: "fail/second-root-after-space", in: "<r></r>\n<s>x</s>", kind: KindMultipleRoots},
	{name: "fail/text-after-root", in: `<r/>garbage`, kind: KindOutsideRoot},
	{name: "fail/text-before-root", in: `x<r/>`, kind: KindOutsideRoot},
	{name: "fail/nbsp-after-root", in: "<r/>\u00A0", kind: KindOutsideRoot},
	{name: "fail/comment-before-root", in: `<!-- c --><r/>`, kind: KindOutsideRoot},
	{name: "fail/comment-after-root", in: `<r/><!-- c -->`, kind: KindOutsideRoot},
	{name: "fail/cdata-outside-root", in: `<r/><![CDATA[x]]>`, kind: KindOutsideRoot},
	{name: "fail/lone-lt-after-root", in: `<r/><`, kind: KindOutsideRoot},
	{name: "fail/end-tag-before-root", in: `</r>`, kind: KindTagMismatch},
	{name: "fail/end-tag-after-root", in: `<r/></r>`, kind: KindTagMismatch},
	{name: "fail/mismatched-end-tag", in: `<r></s>`, kind: KindTagMismatch},
	{name: "fail/mismatched-end-tag-longer", in: `<r></rr>`, kind: KindTagMismatch},
	{name: "fail/mismatched-end-tag-prefix", in: `<p:r xmlns:p="urn:u" xmlns:q="urn:u"></q:r>`, kind: KindTagMismatch},
	{name: "fail/mismatched-nesting", in: `<r><a><b></a></b></r>`, kind: KindTagMismatch},
	{name: "fail/unclosed-root", in: `<r><a></a>`, kind: KindEOF},
	{name: "fail/unclosed-text", in: `<r>text`, kind: KindEOF},
	{name: "fail/truncated-start-tag", in: `<r`, kind: KindEOF},
	{name: "fail/truncated-attr-value", in: `<r a="1`, kind: KindEOF},
	{name: "fail/truncated-attr-name", in: `<r a`, kind: KindEOF},
	{name: "fail/truncated-end-tag", in: `<r></r`, kind: KindEOF},
	{name: "fail/truncated-lt", in: `<r><`, kind: KindEOF},
	{name: "fail/truncated-comment", in: `<r><!-- x`, kind: KindEOF},
	{name: "fail/truncated-comment-open", in: `<r><!-`, kind: KindEOF},
	{name: "fail/truncated-cdata", in: `<r><![CDATA[x]]`, kind: KindEOF},
	{name: "fail/end-tag-garbage", in: `<r></r x>`, kind: KindSyntax},
	{name: "fail/cdata-end-in-text", in: `<r>a]]>b</r>`, kind: KindCDATAEnd},
	{name: "fail/comment-double-dash", in: `<r><!-- a -- b --></r>`, kind: KindSyntax},
	{name: "fail/comment-ending-in-dash", in: `<r><!-- a ---></r>`, kind: KindSyntax},
	// Comments and CDATA in the Security header (DESIGN §5.1).
	{name: "fail/comment-in-security", in: secHeader(`<!-- x -->`), kind: KindProtectedComment},
	{name: "fail/comment-deep-in-security", in: secHeader(`<ds:Signature xmlns:ds="` + NamespaceDSig + `"><ds:SignedInfo><ds:DigestValue>AB<!---->CD</ds:DigestValue></ds:SignedInfo></ds:Signature>`), kind: KindProtectedComment},
	{name: "fail/cdata-in-security", in: secHeader(`<x><![CDATA[y]]></x>`), kind: KindProtectedCDATA},
}

func TestScanTable(t *testing.T) {
	sc, err := NewScanner(DefaultConfig())
	require.NoError(t, err)
	for _, tc := range append(append([]scanCase{}, okCases...), failCases...) {
		t.Run(tc.name, func(t *testing.T) {
			var d Document
			err := sc.Scan([]byte(tc.in), &d)
			if tc.kind == 0 {
				require.NoError(t, err)
				checkSpans(t, &d)
				checkStdlib(t, &d)
				return
			}
			require.Error(t, err)
			assert.Equal(t, tc.kind.String(), kindOf(err).String(), "error: %v", err)
			assert.True(t, errors.Is(err, tc.kind))
			var e *Error
			require.ErrorAs(t, err, &e)
			assert.GreaterOrEqual(t, e.Offset, 0)
			assert.LessOrEqual(t, e.Offset, len(tc.in))
			assert.True(t, strings.HasPrefix(err.Error(), "xmlscan: "+tc.kind.String()), err.Error())
		})
	}
}

// TestStdlibLooserOnFailCases documents that encoding/xml accepts many of
// the inputs the gate rejects: the gate, not etree, is the boundary.
func TestStdlibLooserOnFailCases(t *testing.T) {
	accepted := 0
	for _, tc := range failCases {
		if _, err := stdlibView([]byte(tc.in)); err == nil {
			accepted++
		}
	}
	t.Logf("encoding/xml (Strict) accepts %d of %d inputs the gate rejects", accepted, len(failCases))
	assert.Greater(t, accepted, 20)
}

func TestKinds(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range kinds() {
		s := k.String()
		require.Regexp(t, `^[a-z][a-z0-9_]*$`, s)
		require.False(t, seen[s], "duplicate label %s", s)
		seen[s] = true
		assert.Equal(t, "xmlscan: "+s, k.Error())
		assert.Equal(t, strings.HasPrefix(s, "limit_"), k.IsLimit(), s)
	}
	assert.Equal(t, "unknown", Kind(0).String())
	assert.Equal(t, "unknown", kindEnd.String())
	assert.Equal(t, Kind(0), kindOf(nil))
	assert.Equal(t, Kind(0), kindOf(errors.New("x")))
	e := &Error{Kind: KindDoctype, Offset: 3, Detail: "document type declaration"}
	assert.Equal(t, "xmlscan: doctype: document type declaration at offset 3", e.Error())
}

func TestNewScannerConfig(t *testing.T) {
	_, err := NewScanner(Config{Limits: Limits{MaxDepth: -1, MaxBytes: -2}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "MaxDepth")
	assert.Contains(t, err.Error(), "MaxBytes")

	_, err = NewScanner(Config{NoCommentsIn: []Name{{Space: "urn:u"}}})
	require.Error(t, err)

	sc, err := NewScanner(Config{Limits: Limits{MaxDepth: 7}})
	require.NoError(t, err)
	want := DefaultLimits()
	want.MaxDepth = 7
	assert.Equal(t, want, sc.Limits())
}

func TestNoCommentsInCustomElement(t *testing.T) {
	sc, err := NewScanner(Config{NoCommentsIn: []Name{{Space: "urn:u", Local: "signed"}}})
	require.NoError(t, err)
	var d Document
	require.NoError(t, sc.Scan([]byte(`<r xmlns:p="urn:u"><!--ok--><signed/><x><![CDATA[ok]]></x></r>`), &d))
	err = sc.Scan([]byte(`<r xmlns:p="urn:u"><p:signed><a><![CDATA[x]]></a></p:signed></r>`), &d)
	assert.ErrorIs(t, err, KindProtectedCDATA)
	// Without the option a comment in the Security header is only flagged.
	sc, err = NewScanner(Config{})
	require.NoError(t, err)
	require.NoError(t, sc.Scan([]byte(secHeader(`<!-- x -->`)), &d))
	assert.NotZero(t, d.Elements[2].Flags&FlagComment)
	assert.Zero(t, d.Elements[2].Flags&FlagProtected)
}
