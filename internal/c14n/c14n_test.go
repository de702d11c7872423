package c14n

import (
	"bytes"
	"crypto/sha256"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/xmlscan"
)

// elemByLocal returns the first element with the given local name.
func elemByLocal(t *testing.T, data []byte, local string) (*xmlscan.Document, int) {
	t.Helper()
	d := scan(t, data)
	for i := range d.Elements {
		if d.Elements[i].Local == local {
			return d, i
		}
	}
	t.Fatalf("no element %s", local)
	return nil, 0
}

func TestCanonicalize(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		elem   string // local name of the apex; "" for the root
		alg    string
		prefix []string
		want   string
		err    error
	}{
		// Serialization rules (C14N 1.0 §1.1, §2.3).
		{name: "ok/empty-element", in: `<a/>`, alg: AlgExcC14N, want: `<a></a>`},
		{name: "ok/attr-normalization", in: "<a x=\"a&#9;b\tc\nd\r\ne&#xA;f&#13;g\" y='q\"q' z=\"&lt;&gt;>&amp;\"/>", alg: AlgExcC14N,
			want: `<a x="a&#x9;b c d e&#xA;f&#xD;g" y="q&quot;q" z="&lt;>>&amp;"></a>`},
		{name: "ok/text-escaping", in: "<a>&lt;&gt;>&amp;&#xD;&quot;&apos;\r\n\rx&#x10000;</a>", alg: AlgExcC14N,
			want: "<a>&lt;&gt;&gt;&amp;&#xD;\"'\n\nx\U00010000</a>"},
		{name: "ok/cdata", in: "<a><![CDATA[<x>&\r\n]]>&gt;</a>", alg: AlgExcC14N, want: "<a>&lt;x&gt;&amp;\n&gt;</a>"},
		{name: "ok/comment-dropped", in: `<a>x<!-- c -->y<b/></a>`, alg: AlgExcC14N, want: `<a>xy<b></b></a>`},
		{name: "ok/comment-kept", in: "<a>x<!-- c\r\n -->y</a>", alg: AlgExcC14NWithComments, want: "<a>x<!-- c\n -->y</a>"},
		{name: "ok/inclusive-comment-kept", in: `<a><!--c--></a>`, alg: AlgC14N10WithComments, want: `<a><!--c--></a>`},
		{name: "ok/whitespace-kept", in: "<a>\n  <b> </b>\n</a>", alg: AlgC14N10, want: "<a>\n  <b> </b>\n</a>"},
		{name: "ok/attr-order", in: `<a xmlns:b="urn:b" xmlns:c="urn:a" z="1" b:y="2" c:x="3" a="4"/>`, alg: AlgExcC14N,
			want: `<a xmlns:b="urn:b" xmlns:c="urn:a" a="4" z="1" c:x="3" b:y="2"></a>`},
		{name: "ok/ns-order-default-first", in: `<z:a xmlns:z="urn:z" xmlns:a="urn:a" xmlns="urn:d"/>`, alg: AlgC14N10,
			want: `<z:a xmlns="urn:d" xmlns:a="urn:a" xmlns:z="urn:z"></z:a>`},
		{name: "ok/ns-uri-escaped", in: `<p:a xmlns:p="urn:a&amp;b&quot;"/>`, alg: AlgExcC14N, want: `<p:a xmlns:p="urn:a&amp;b&quot;"></p:a>`},

		// Exclusive c14n namespace rules (exc-c14n §3).
		{name: "ok/exc/unused-dropped", in: `<r xmlns:u="urn:u" xmlns="urn:d"><x:a xmlns:x="urn:x"/></r>`, elem: "a", alg: AlgExcC14N,
			want: `<x:a xmlns:x="urn:x"></x:a>`},
		{name: "ok/exc/default-utilized", in: `<r xmlns="urn:d"><a/></r>`, elem: "a", alg: AlgExcC14N, want: `<a xmlns="urn:d"></a>`},
		{name: "ok/exc/attr-prefix-utilized", in: `<r xmlns:x="urn:x"><a x:k="v"/></r>`, elem: "a", alg: AlgExcC14N,
			want: `<a xmlns:x="urn:x" x:k="v"></a>`},
		{name: "ok/exc/no-redeclare", in: `<p:r xmlns:p="urn:1"><p:a xmlns:p="urn:1"/></p:r>`, alg: AlgExcC14N,
			want: `<p:r xmlns:p="urn:1"><p:a></p:a></p:r>`},
		{name: "ok/exc/rebind", in: `<p:r xmlns:p="urn:1"><p:a xmlns:p="urn:2"><p:b xmlns:p="urn:1"/></p:a></p:r>`, alg: AlgExcC14N,
			want: `<p:r xmlns:p="urn:1"><p:a xmlns:p="urn:2"><p:b xmlns:p="urn:1"></p:b></p:a></p:r>`},
		{name: "ok/exc/unused-rebind-skipped", in: `<p:r xmlns:p="urn:1"><a xmlns:p="urn:2"><p:b xmlns:p="urn:1"/></a></p:r>`, alg: AlgExcC14N,
			want: `<p:r xmlns:p="urn:1"><a><p:b></p:b></a></p:r>`},
		{name: "ok/exc/xmlns-empty", in: `<r xmlns="urn:d"><a xmlns=""><b/></a></r>`, alg: AlgExcC14N,
			want: `<r xmlns="urn:d"><a xmlns=""><b></b></a></r>`},
		{name: "ok/exc/xmlns-empty-apex", in: `<r xmlns="urn:d"><a xmlns=""><b/></a></r>`, elem: "a", alg: AlgExcC14N, want: `<a><b></b></a>`},
		{name: "ok/exc/xml-attrs-not-imported", in: `<r xml:lang="en" xml:space="preserve"><a xml:lang="fr"/></r>`, elem: "a", alg: AlgExcC14N,
			want: `<a xml:lang="fr"></a>`},
		{name: "ok/exc/prefixlist", in: `<r xmlns:x="urn:x" xmlns:y="urn:y" xmlns="urn:d"><a:a xmlns:a="urn:a"><b xmlns:x="urn:x2"/></a:a></r>`,
			elem: "a", alg: AlgExcC14N, prefix: []string{"x", "#default", "nope", "xml"},
			want: `<a:a xmlns="urn:d" xmlns:a="urn:a" xmlns:x="urn:x"><b xmlns:x="urn:x2"></b></a:a>`},
		{name: "ok/exc/prefixlist-default-absent", in: `<r><a/></r>`, elem: "a", alg: AlgExcC14N, prefix: []string{"#default"}, want: `<a></a>`},
		{name: "ok/exc/qname-content-not-utilized", in: `<r xmlns:t="urn:t" xmlns:xsi="urn:xsi"><a xsi:type="t:T"/></r>`, elem: "a", alg: AlgExcC14N,
			want: `<a xmlns:xsi="urn:xsi" xsi:type="t:T"></a>`},

		// Inclusive c14n (C14N 1.0 §2.3, §2.4; 1.1 §2.4).
		{name: "ok/c14n/in-scope-on-apex", in: `<r xmlns:u="urn:u" xmlns="urn:d"><a xmlns:u="urn:u"><b xmlns=""/></a></r>`, elem: "a", alg: AlgC14N10,
			want: `<a xmlns="urn:d" xmlns:u="urn:u"><b xmlns=""></b></a>`},
		{name: "ok/c14n/shadowed-default", in: `<r xmlns="urn:d"><m xmlns=""><a/></m></r>`, elem: "a", alg: AlgC14N10, want: `<a></a>`},
		{name: "ok/c14n/redundant-undeclare", in: `<r><a xmlns=""/></r>`, alg: AlgC14N10, want: `<r><a></a></r>`},
		{name: "ok/c14n10/xml-attrs-inherited", in: `<r xml:lang="en" xml:id="i" xml:space="preserve" xml:base="http://b/"><m xml:lang="de"><a xml:lang="fr" k="v"/></m></r>`,
			elem: "a", alg: AlgC14N10, want: `<a k="v" xml:base="http://b/" xml:id="i" xml:lang="fr" xml:space="preserve"></a>`},
		{name: "ok/c14n10/nearest-ancestor-wins", in: `<r xml:lang="en"><m xml:lang="de"><a/></m></r>`, elem: "a", alg: AlgC14N10,
			want: `<a xml:lang="de"></a>`},
		{name: "ok/c14n11/xml-id-not-inherited", in: `<r xml:lang="en" xml:id="i" xml:space="preserve"><a/></r>`, elem: "a", alg: AlgC14N11,
			want: `<a xml:lang="en" xml:space="preserve"></a>`},
		{name: "ok/c14n11/xml-base-on-apex", in: `<r><a xml:base="http://b/"/></r>`, elem: "a", alg: AlgC14N11, want: `<a xml:base="http://b/"></a>`},
		{name: "ok/c14n/no-inheritance-below-apex", in: `<r xml:lang="en"><a><b/></a></r>`, elem: "a", alg: AlgC14N10, want: `<a xml:lang="en"><b></b></a>`},

		// Rejections.
		{name: "fail/c14n11/xml-base-on-ancestor", in: `<r xml:base="http://b/"><a/></r>`, elem: "a", alg: AlgC14N11, err: ErrUnsupported},
		{name: "fail/relative-ns/exc", in: `<a xmlns="rel/x"/>`, alg: AlgExcC14N, err: ErrRelativeNamespace},
		{name: "fail/relative-ns/unused-in-subtree", in: `<a><b xmlns:p="../x"/></a>`, alg: AlgExcC14N, err: ErrRelativeNamespace},
		{name: "fail/relative-ns/inherited-c14n", in: `<r xmlns:p="x"><a/></r>`, elem: "a", alg: AlgC14N10, err: ErrRelativeNamespace},
		{name: "ok/relative-ns/ancestor-unused-exc", in: `<r xmlns:p="x"><a/></r>`, elem: "a", alg: AlgExcC14N, want: `<a></a>`},
		{name: "fail/alg/xpath", in: `<a/>`, alg: "http://www.w3.org/TR/1999/REC-xpath-19991116", err: ErrUnsupported},
		{name: "fail/alg/xslt", in: `<a/>`, alg: "http://www.w3.org/TR/1999/REC-xslt-19991116", err: ErrUnsupported},
		{name: "fail/alg/exc-c14n-20020524", in: `<a/>`, alg: "http://www.w3.org/2001/10/xml-exc-c14n", err: ErrUnsupported},
		{name: "fail/alg/empty", in: `<a/>`, alg: "", err: ErrUnsupported},
		{name: "fail/prefixlist/inclusive", in: `<a/>`, alg: AlgC14N10, prefix: []string{"a"}, err: ErrPrefixList},
		{name: "fail/prefixlist/qname", in: `<a/>`, alg: AlgExcC14N, prefix: []string{"a:b"}, err: ErrPrefixList},
		{name: "fail/prefixlist/empty-token", in: `<a/>`, alg: AlgExcC14N, prefix: []string{""}, err: ErrPrefixList},
		{name: "fail/prefixlist/too-long", in: `<a/>`, alg: AlgExcC14N, prefix: make([]string, MaxPrefixes+1), err: ErrPrefixList},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := scan(t, []byte(tc.in))
			elem := 0
			if tc.elem != "" {
				_, elem = elemByLocal(t, []byte(tc.in), tc.elem)
			}
			got, err := Canonicalize(tc.alg, d, elem, tc.prefix, []byte("keep:"))
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				require.Equal(t, "keep:", string(got), "dst is returned unchanged on error")
				return
			}
			require.NoError(t, err)
			require.Equal(t, "keep:"+tc.want, string(got))
			var sb sinkBuffer
			require.NoError(t, CanonicalizeTo(&sb, tc.alg, d, elem, tc.prefix))
			require.Equal(t, tc.want, string(sb))
			checkGoxmldsig(t, []byte(tc.in), elem, tc.alg, tc.prefix, tc.want)
		})
	}
}

func TestElementRange(t *testing.T) {
	d := scan(t, []byte(`<a/>`))
	for _, i := range []int{-1, 1} {
		_, err := Exclusive(d, i, nil, false, nil)
		assert.ErrorIs(t, err, ErrElement)
	}
	_, err := Exclusive(nil, 0, nil, false, nil)
	assert.ErrorIs(t, err, ErrElement)
}

func TestParsePrefixList(t *testing.T) {
	pl, err := ParsePrefixList(" wsse\tsoapenv\n#default\r\n")
	require.NoError(t, err)
	assert.Equal(t, []string{"wsse", "soapenv", "#default"}, pl)
	pl, err = ParsePrefixList("")
	require.NoError(t, err)
	assert.Empty(t, pl)
	for _, bad := range []string{"a:b", "#defaultx", strings.Repeat("p ", MaxPrefixes+1)} {
		_, err := ParsePrefixList(bad)
		assert.ErrorIs(t, err, ErrPrefixList, bad)
	}
}

// errWriter fails after n bytes.
type errWriter struct{ n int }

func (w *errWriter) Write(p []byte) (int, error) {
	if w.n -= len(p); w.n < 0 {
		return 0, assert.AnError
	}
	return len(p), nil
}

// TestStreaming checks that large texts and many elements are streamed in
// bounded writes with the same bytes, and that a writer error surfaces.
func TestStreaming(t *testing.T) {
	var b strings.Builder
	b.WriteString(`<r xmlns="urn:r">`)
	for i := range 500 {
		b.WriteString(`<item n="` + strings.Repeat("x", i%7) + `">` + strings.Repeat("t&amp;", i) + `</item>`)
	}
	b.WriteString(`<big>` + strings.Repeat("y", 100000) + `</big></r>`)
	d := scan(t, []byte(b.String()))
	want, err := Exclusive(d, 0, nil, false, nil)
	require.NoError(t, err)
	h1, h2 := sha256.New(), sha256.New()
	h1.Write(want)
	var sizes writeSizes
	require.NoError(t, ExclusiveTo(&sizes, d, 0, nil, false))
	require.NoError(t, ExclusiveTo(h2, d, 0, nil, false))
	require.Equal(t, h1.Sum(nil), h2.Sum(nil))
	require.Equal(t, len(want), sizes.total)
	assert.Less(t, sizes.writes, len(want)/(flushAt/2), "writes are batched")

	require.ErrorIs(t, ExclusiveTo(&errWriter{n: 10000}, d, 0, nil, false), assert.AnError)
}

type writeSizes struct{ writes, total int }

func (w *writeSizes) Write(p []byte) (int, error) { w.writes++; w.total += len(p); return len(p), nil }

// TestNoAllocs checks the steady state of both entry points.
func TestNoAllocs(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("allocation counts are not meaningful under -cover/-race")
	}
	d := scan(t, readVector(t, "wss4j/sign-bst/0000.xml"))
	body := find(d, "http://schemas.xmlsoap.org/soap/envelope/", "Body", 0)
	buf := make([]byte, 0, 8192)
	h := sha256.New()
	pl := []string{"soapenv"}
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		buf, _ = Exclusive(d, body, pl, false, buf[:0])
	}))
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		h.Reset()
		_ = ExclusiveTo(h, d, body, pl, false)
	}))
	assert.True(t, bytes.HasPrefix(buf, []byte("<soapenv:Body")))
}
