package xmlscan

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// limitCase builds, for a configured limit n, a document exactly at the
// limit (doc(n)) and one past it (doc(n+1)).
type limitCase struct {
	set  func(*Limits, int)
	n    int
	doc  func(n int) string
	kind Kind
}

func nest(n int) string {
	return strings.Repeat("<a>", n) + strings.Repeat("</a>", n)
}

func attrs(n int) string {
	var b strings.Builder
	b.WriteString(`<r xmlns="urn:u" xmlns:p="urn:p"`) // declarations are not counted
	for i := range n {
		fmt.Fprintf(&b, ` a%d="v"`, i)
	}
	return b.String() + "/>"
}

func nsDeclsOnOne(n int) string {
	var b strings.Builder
	b.WriteString(`<r`)
	for i := range n {
		fmt.Fprintf(&b, ` xmlns:p%d="urn:%d"`, i, i)
	}
	return b.String() + "/>"
}

func nsDeclsTotal(n int) string {
	var b strings.Builder
	b.WriteString(`<r>`)
	for range n {
		b.WriteString(`<a xmlns="urn:u"/>`)
	}
	return b.String() + "</r>"
}

func dsig(inner string) string {
	return `<ds:Signature xmlns:ds="` + NamespaceDSig + `"><ds:SignedInfo>` + inner + `</ds:SignedInfo></ds:Signature>`
}

var limitCases = map[string]limitCase{
	"bytes": {set: func(l *Limits, n int) { l.MaxBytes = n }, n: 20,
		doc: func(n int) string { return "<r>" + strings.Repeat("x", n-7) + "</r>" }, kind: KindLimitBytes},
	"depth":      {set: func(l *Limits, n int) { l.MaxDepth = n }, n: 5, doc: nest, kind: KindLimitDepth},
	"attributes": {set: func(l *Limits, n int) { l.MaxAttrs = n }, n: 3, doc: attrs, kind: KindLimitAttrs},
	"element-name-length": {set: func(l *Limits, n int) { l.MaxNameLen = n }, n: 8,
		doc: func(n int) string { return "<p:" + strings.Repeat("e", n-2) + ` xmlns:p="urn:u"/>` }, kind: KindLimitNameLen},
	"attribute-name-length": {set: func(l *Limits, n int) { l.MaxNameLen = n }, n: 8,
		doc: func(n int) string { return "<r " + strings.Repeat("a", n) + `="1"/>` }, kind: KindLimitNameLen},
	"ns-decls-per-element": {set: func(l *Limits, n int) { l.MaxNSDeclsPerElement = n }, n: 3,
		doc: nsDeclsOnOne, kind: KindLimitNSDeclsPerElement},
	"ns-decls-total": {set: func(l *Limits, n int) { l.MaxNSDecls = n }, n: 4, doc: nsDeclsTotal, kind: KindLimitNSDecls},
	"text-length": {set: func(l *Limits, n int) { l.MaxTextLen = n }, n: 10,
		doc: func(n int) string { return "<r>" + strings.Repeat("x", n) + "</r>" }, kind: KindLimitText},
	"text-length-split-by-markup": {set: func(l *Limits, n int) { l.MaxTextLen = n }, n: 10,
		doc: func(n int) string {
			return "<r><a>" + strings.Repeat("x", n-5) + "<b/><!--c-->" + "<![CDATA[xx]]>" + strings.Repeat("y", 3) + "</a></r>"
		}, kind: KindLimitText},
	"attribute-value-length": {set: func(l *Limits, n int) { l.MaxAttrValueLen = n }, n: 10,
		doc: func(n int) string { return `<r a="` + strings.Repeat("v", n) + `"/>` }, kind: KindLimitAttrValue},
	"ns-decl-value-length": {set: func(l *Limits, n int) { l.MaxAttrValueLen = n }, n: 10,
		doc: func(n int) string { return `<r xmlns="urn:` + strings.Repeat("v", n-4) + `"/>` }, kind: KindLimitAttrValue},
	"elements": {set: func(l *Limits, n int) { l.MaxElements = n }, n: 4,
		doc: func(n int) string { return "<r>" + strings.Repeat("<a/>", n-1) + "</r>" }, kind: KindLimitElements},
	"base64-length": {set: func(l *Limits, n int) { l.MaxBase64Len = n }, n: 12,
		doc: func(n int) string {
			return `<ds:SignatureValue xmlns:ds="` + NamespaceDSig + `">` + strings.Repeat("A", n) + `</ds:SignatureValue>`
		}, kind: KindLimitBase64},
	"base64-length-wsse": {set: func(l *Limits, n int) { l.MaxBase64Len = n }, n: 12,
		doc: func(n int) string {
			return `<wsse:BinarySecurityToken xmlns:wsse="` + NamespaceWSSE + `">` + strings.Repeat("A", n) + `</wsse:BinarySecurityToken>`
		}, kind: KindLimitBase64},
	"base64-length-xenc-default-ns": {set: func(l *Limits, n int) { l.MaxBase64Len = n }, n: 12,
		doc: func(n int) string {
			return `<CipherValue xmlns="` + NamespaceXEnc + `">` + strings.Repeat("A", n) + `</CipherValue>`
		}, kind: KindLimitBase64},
	"references": {set: func(l *Limits, n int) { l.MaxReferences = n }, n: 2,
		doc: func(n int) string { return dsig(strings.Repeat(`<ds:Reference URI="#a"/>`, n)) }, kind: KindLimitReferences},
	"transforms": {set: func(l *Limits, n int) { l.MaxTransforms = n }, n: 2,
		doc: func(n int) string {
			return dsig(`<ds:Reference><ds:Transforms>` + strings.Repeat(`<ds:Transform/>`, n) + `</ds:Transforms></ds:Reference>`)
		}, kind: KindLimitTransforms},
	"signatures": {set: func(l *Limits, n int) { l.MaxSignatures = n }, n: 2,
		doc: func(n int) string { return "<r>" + strings.Repeat(dsig(""), n) + "</r>" }, kind: KindLimitSignatures},
	"encrypted-keys": {set: func(l *Limits, n int) { l.MaxEncryptedKeys = n }, n: 2,
		doc: func(n int) string {
			// Nested in EncryptedData or not, every one is counted; other
			// xenc elements are not.
			return `<r xmlns:x="` + NamespaceXEnc + `"><x:EncryptedData><x:KeyInfo/></x:EncryptedData>` +
				strings.Repeat(`<x:EncryptedKey><x:ReferenceList/></x:EncryptedKey>`, n-1) +
				`<x:EncryptedData><k:KeyInfo xmlns:k="` + NamespaceDSig + `"><x:EncryptedKey/></k:KeyInfo></x:EncryptedData></r>`
		}, kind: KindLimitEncryptedKeys},
	"encrypted-data": {set: func(l *Limits, n int) { l.MaxEncryptedData = n }, n: 3,
		doc: func(n int) string {
			return `<r><EncryptedKey xmlns="` + NamespaceXEnc + `"/>` + strings.Repeat(`<EncryptedData xmlns="`+NamespaceXEnc+`"/>`, n) + `</r>`
		}, kind: KindLimitEncryptedData},
}

func TestLimits(t *testing.T) {
	for name, lc := range limitCases {
		l := DefaultLimits()
		lc.set(&l, lc.n)
		sc, err := NewScanner(Config{Limits: l})
		require.NoError(t, err)
		t.Run("ok/at-limit-"+name, func(t *testing.T) {
			var d Document
			in := lc.doc(lc.n)
			if name == "bytes" {
				require.Len(t, in, lc.n)
			}
			require.NoError(t, sc.Scan([]byte(in), &d))
			checkSpans(t, &d)
			checkStdlib(t, &d)
		})
		t.Run("fail/over-limit-"+name, func(t *testing.T) {
			var d Document
			in := lc.doc(lc.n + 1)
			err := sc.Scan([]byte(in), &d)
			require.Error(t, err)
			assert.Equal(t, lc.kind.String(), kindOf(err).String(), "%v", err)
			assert.True(t, lc.kind.IsLimit())
			var e *Error
			require.ErrorAs(t, err, &e)
			assert.LessOrEqual(t, e.Offset, len(in))
		})
	}
}

// The base64 limit replaces the text limit only in the security namespaces.
func TestBase64LimitOnlyForSecurityNamespaces(t *testing.T) {
	sc, err := NewScanner(Config{Limits: Limits{MaxBase64Len: 4, MaxTextLen: 100}})
	require.NoError(t, err)
	var d Document
	require.NoError(t, sc.Scan([]byte(`<SignatureValue>AAAAAAAA</SignatureValue>`), &d))
	require.NoError(t, sc.Scan([]byte(`<ds:X xmlns:ds="`+NamespaceDSig+`"><o xmlns="urn:o">AAAAAAAA</o></ds:X>`), &d))
	err = sc.Scan([]byte(`<ds:X xmlns:ds="`+NamespaceDSig+`">AAAAA</ds:X>`), &d)
	assert.ErrorIs(t, err, KindLimitBase64)
}

// Deep nesting far beyond the limit fails fast and without recursion.
func TestDeepNesting(t *testing.T) {
	var d Document
	for _, n := range []int{1_000, 10_000, 1_000_000} {
		err := Scan([]byte(nest(n)), &d)
		require.ErrorIs(t, err, KindLimitDepth, "depth %d", n)
	}
}

// A width attack (many attributes, many namespace declarations in scope)
// stays fast: the duplicate check and prefix lookups are hashed.
func TestWidth(t *testing.T) {
	sc, err := NewScanner(Config{Limits: Limits{MaxAttrs: 20000, MaxNSDeclsPerElement: 5000, MaxNSDecls: 5000}})
	require.NoError(t, err)
	var d Document
	require.NoError(t, sc.Scan([]byte(attrs(20000)), &d))
	assert.Len(t, d.Attrs, 20000)

	var b strings.Builder
	b.WriteString(nsDeclsOnOne(5000)[:len(nsDeclsOnOne(5000))-2] + ">")
	for i := range 2000 {
		fmt.Fprintf(&b, `<p%d:a p%d:x="1" p%d:y="2"/>`, i, i*2, i*2+1)
	}
	b.WriteString("</r>")
	require.NoError(t, sc.Scan([]byte(b.String()), &d))
	checkSpans(t, &d)
	checkStdlib(t, &d)
	assert.Equal(t, "urn:3999", d.Attrs[len(d.Attrs)-1].Space)
}
