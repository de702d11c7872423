package mime

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/xmlscan"
)

func TestCIDFromURL(t *testing.T) {
	tests := []struct {
		href string
		want string
		err  bool
	}{
		{href: "cid:a@x", want: "a@x"},
		{href: "CID:a@x", want: "a@x"},
		{href: "cid:http%3A%2F%2Ftempuri.org%2F1%2F63", want: "http://tempuri.org/1/63"},
		{href: "cid:0.urn:uuid:1234@apache.org", want: "0.urn:uuid:1234@apache.org"},
		{href: "", err: true},
		{href: "cid:", err: true},
		{href: "http://evil.example/x", err: true},
		{href: "file:///etc/passwd", err: true},
		{href: "attachment.bin", err: true},
		{href: "#id", err: true},
		{href: "mid:a@x", err: true},
		{href: "cid:a b", err: true},
		{href: "cid:a%20b", err: true},
		{href: "cid:a%3Eb", err: true},
		{href: "cid:a%", err: true},
		{href: "cid:a%4", err: true},
		{href: "cid:a%zz", err: true},
		{href: "cid:<a>", err: true},
		{href: "cid:a%00", err: true},
	}
	for _, tt := range tests {
		name := "ok/" + tt.href
		if tt.err {
			name = "fail/" + tt.href
		}
		t.Run(name, func(t *testing.T) {
			got, err := CIDFromURL(tt.href)
			if tt.err {
				require.ErrorIs(t, err, ErrReference)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

const (
	xopEnv = `<s:Envelope xmlns:s="http://www.w3.org/2003/05/soap-envelope" xmlns:xop="http://www.w3.org/2004/08/xop/include" xmlns:o="urn:other"><s:Body>`
	xopEnd = `</s:Body></s:Envelope>`
)

// twoPartCase reads a package with attachments a@x and b@x, MTOM unless
// ct is given (SwA), and scans doc, the root a test case checks.
func twoPartCase(t *testing.T, sc *xmlscan.Scanner, ct, doc string) (*Package, *xmlscan.Document) {
	t.Helper()
	root := hdrSwA
	if ct == "" {
		ct, root = ctMTOM, hdrRoot
	}
	p := readPkg(t, testLimits(t), ct, pkg(part(root, envXOP), att("a@x", "AAA"), att("b@x", "BBB")))
	var d xmlscan.Document
	require.NoError(t, sc.Scan([]byte(doc), &d))
	return p, &d
}

func TestResolveXOP(t *testing.T) {
	tests := []struct {
		name  string
		body  string
		ct    string
		want  error
		parts []string // cids in include order
	}{
		{name: "ok/two-includes", body: `<a><xop:Include href="cid:a@x"/></a><b><xop:Include href="cid:b%40x"></xop:Include></b>`, parts: []string{"a@x", "b@x"}},
		{name: "ok/no-includes", body: `<a>text</a>`},
		{name: "ok/foreign-attribute", body: `<a><xop:Include href="cid:a@x" o:hint="1"/></a>`, parts: []string{"a@x"}},
		{name: "ok/default-namespace", body: `<a><Include xmlns="http://www.w3.org/2004/08/xop/include" href="cid:a@x"/></a>`, parts: []string{"a@x"}},
		{name: "fail/http-href", body: `<a><xop:Include href="http://evil.example/a"/></a>`, want: ErrReference},
		{name: "fail/file-href", body: `<a><xop:Include href="file:///etc/passwd"/></a>`, want: ErrReference},
		{name: "fail/relative-href", body: `<a><xop:Include href="a@x"/></a>`, want: ErrReference},
		{name: "fail/empty-href", body: `<a><xop:Include href=""/></a>`, want: ErrReference},
		{name: "fail/no-href", body: `<a><xop:Include/></a>`, want: ErrReference},
		{name: "fail/qualified-href-only", body: `<a><xop:Include xop:href="cid:a@x"/></a>`, want: ErrReference},
		{name: "fail/extra-unqualified-attribute", body: `<a><xop:Include href="cid:a@x" x="1"/></a>`, want: ErrReference},
		{name: "fail/unknown-part", body: `<a><xop:Include href="cid:nope@x"/></a>`, want: ErrMissingPart},
		{name: "fail/root-is-not-an-attachment", body: `<a><xop:Include href="cid:root@x"/></a>`, want: ErrMissingPart},
		{name: "fail/included-twice", body: `<a><xop:Include href="cid:a@x"/></a><b><xop:Include href="cid:a%40x"/></b>`, want: ErrReference},
		{name: "fail/case-variant-is-not-the-part", body: `<a><xop:Include href="cid:A@X"/></a>`, want: ErrMissingPart},
		{name: "fail/include-with-child", body: `<a><xop:Include href="cid:a@x"><o:c/></xop:Include></a>`, want: ErrReference},
		{name: "fail/include-with-text", body: `<a><xop:Include href="cid:a@x"> </xop:Include></a>`, want: ErrReference},
		{name: "fail/sibling-element", body: `<a><o:c/><xop:Include href="cid:a@x"/></a>`, want: ErrReference},
		{name: "fail/sibling-element-after", body: `<a><xop:Include href="cid:a@x"/><o:c/></a>`, want: ErrReference},
		{name: "fail/sibling-include", body: `<a><xop:Include href="cid:a@x"/><xop:Include href="cid:b@x"/></a>`, want: ErrReference},
		{name: "fail/sibling-text", body: `<a>QUJD<xop:Include href="cid:a@x"/></a>`, want: ErrReference},
		{name: "fail/sibling-charref", body: `<a>&#32;<xop:Include href="cid:a@x"/></a>`, want: ErrReference},
		{name: "fail/sibling-comment", body: `<a><!--c--><xop:Include href="cid:a@x"/></a>`, want: ErrReference},
		{name: "fail/sibling-whitespace", body: `<b>` + "\n  " + `<xop:Include href="cid:b%40x"></xop:Include>` + "\n</b>", want: ErrPlacement},
		{name: "fail/include-with-comment", body: `<a><xop:Include href="cid:a@x"><!--c--></xop:Include></a>`, want: ErrPlacement},
		{name: "fail/sibling-cdata", body: `<a><![CDATA[x]]><xop:Include href="cid:a@x"/></a>`, want: ErrReference},
		{name: "fail/other-xop-element", body: `<a><xop:Other href="cid:a@x"/></a>`, want: ErrReference},
		{name: "fail/include-in-swa", ct: ctSwA, body: `<a><xop:Include href="cid:a@x"/></a>`, want: ErrReference},
	}
	sc, err := xmlscan.NewScanner(xmlscan.DefaultConfig())
	require.NoError(t, err)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, d := twoPartCase(t, sc, tt.ct, xopEnv+tt.body+xopEnd)
			incs, err := ResolveXOP(d, p)
			if tt.want != nil {
				require.ErrorIs(t, err, tt.want)
				return
			}
			require.NoError(t, err)
			require.Len(t, incs, len(tt.parts))
			for i, inc := range incs {
				assert.Equal(t, tt.parts[i], inc.Part.ContentID())
				assert.Equal(t, "Include", d.Elements[inc.Elem].Local)
				assert.Equal(t, d.Elements[inc.Elem].Parent, inc.Parent)
				assert.NotEqual(t, "Body", d.Elements[inc.Parent].Local)
			}
		})
	}
}

func TestCheckReferenced(t *testing.T) {
	p := readPkg(t, testLimits(t), ctMTOM, pkg(part(hdrRoot, envXOP), att("a@x", "1"), att("b@x", "2")))
	tests := []struct {
		name string
		refs map[string]bool
		bad  string // the attachment the error names; "" for success
	}{
		{"ok/all", map[string]bool{"a@x": true, "b@x": true}, ""},
		{"ok/plus-root", map[string]bool{"a@x": true, "b@x": true, "root@x": true}, ""},
		{"fail/extra-part", map[string]bool{"a@x": true}, "b@x"},
		{"fail/none", nil, "a@x"},
		{"fail/case-variant", map[string]bool{"a@x": true, "B@X": true}, "b@x"},
		{"fail/false-entry", map[string]bool{"a@x": true, "b@x": false}, "b@x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := p.CheckReferenced(tt.refs)
			if tt.bad == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrReference)
			assert.Contains(t, err.Error(), "<"+tt.bad+">")
		})
	}
}

// TestCheckSigned: a package signed through its Body must include every
// MTOM attachment from inside the Body (the rule buffered response signing
// and egress requests share).
func TestCheckSigned(t *testing.T) {
	tests := []struct {
		name string
		ct   string
		doc  string
		want error
	}{
		{name: "ok/both-in-body", doc: xopEnv + `<a><xop:Include href="cid:a@x"/></a><b><xop:Include href="cid:b@x"/></b>` + xopEnd},
		{name: "ok/swa-without-includes", ct: ctSwA, doc: xopEnv + `<a/>` + xopEnd},
		{name: "fail/one-unreferenced", doc: xopEnv + `<a><xop:Include href="cid:a@x"/></a>` + xopEnd, want: ErrReference},
		{name: "fail/included-from-header", doc: `<s:Envelope xmlns:s="http://www.w3.org/2003/05/soap-envelope" xmlns:xop="http://www.w3.org/2004/08/xop/include"><s:Header><h><xop:Include href="cid:b@x"/></h></s:Header><s:Body><a><xop:Include href="cid:a@x"/></a></s:Body></s:Envelope>`, want: ErrReference},
		{name: "fail/no-body", doc: `<s:Envelope xmlns:s="http://www.w3.org/2003/05/soap-envelope" xmlns:xop="http://www.w3.org/2004/08/xop/include"><a><xop:Include href="cid:a@x"/></a><b><xop:Include href="cid:b@x"/></b></s:Envelope>`, want: ErrReference},
		{name: "fail/include-in-swa", ct: ctSwA, doc: xopEnv + `<a><xop:Include href="cid:a@x"/></a>` + xopEnd, want: ErrReference},
		{name: "fail/unknown-part", doc: xopEnv + `<a><xop:Include href="cid:c@x"/></a>` + xopEnd, want: ErrMissingPart},
	}
	sc, err := xmlscan.NewScanner(xmlscan.DefaultConfig())
	require.NoError(t, err)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, d := twoPartCase(t, sc, tt.ct, tt.doc)
			err := CheckSigned(d, p)
			if tt.want != nil {
				require.ErrorIs(t, err, tt.want)
				return
			}
			require.NoError(t, err)
		})
	}
}
