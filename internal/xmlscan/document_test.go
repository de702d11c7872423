package xmlscan

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

// find returns the index of the n-th (0-based) element {space}local.
func find(d *Document, space, local string, n int) int {
	for i := range d.Elements {
		if d.Elements[i].Local == local && d.Elements[i].Space == space {
			if n == 0 {
				return i
			}
			n--
		}
	}
	return -1
}

// between returns the exact bytes from the first occurrence of start to the
// end of the first following occurrence of end.
func between(t testing.TB, data []byte, start, end string) []byte {
	t.Helper()
	i := bytes.Index(data, []byte(start))
	require.GreaterOrEqual(t, i, 0, start)
	j := bytes.Index(data[i:], []byte(end))
	require.GreaterOrEqual(t, j, 0, end)
	return data[i : i+j+len(end)]
}

func TestWSSMessages(t *testing.T) {
	tests := map[string]struct {
		file, env, envNS string
		refs, signatures int
	}{
		"ok/soap11-sign-bst":     {"wss-soap11-sign-bst.xml", "soapenv", "http://schemas.xmlsoap.org/soap/envelope/", 2, 1},
		"ok/soap12-sign-bst":     {"wss-soap12-sign-bst.xml", "env", "http://www.w3.org/2003/05/soap-envelope", 2, 1},
		"ok/soap11-signencr-gcm": {"wss-soap11-signencr-gcm.xml", "soapenv", "http://schemas.xmlsoap.org/soap/envelope/", 2, 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			data := readTestdata(t, tc.file)
			var d Document
			require.NoError(t, Scan(data, &d))
			checkSpans(t, &d)
			checkStdlib(t, &d)

			assert.Equal(t, Span{0, 54}, d.Decl)
			root := d.Root()
			assert.Equal(t, "Envelope", root.Local)
			assert.Equal(t, tc.env, root.Prefix)
			assert.Equal(t, tc.envNS, root.Space)
			assert.Equal(t, string(data[54:]), string(d.ElementBytes(0)))
			assert.Equal(t, tc.refs, d.References)
			assert.Equal(t, tc.signatures, d.Signatures)

			// The Security header: exact bytes, protected, no comments.
			sec := find(&d, NamespaceWSSE, "Security", 0)
			require.GreaterOrEqual(t, sec, 0)
			assert.Equal(t, between(t, data, "<wsse:Security", "</wsse:Security>"), d.ElementBytes(sec))
			assert.NotZero(t, d.Elements[sec].Flags&FlagProtected)
			assert.Zero(t, d.Elements[sec].Flags&(FlagComment|FlagCDATA))
			assert.Equal(t, "wsse", d.Elements[sec].Prefix)
			assert.Len(t, d.NSDeclsOf(sec), 2)

			// Body: exact bytes, content span, wsu:Id by namespace.
			body := find(&d, tc.envNS, "Body", 0)
			require.GreaterOrEqual(t, body, 0)
			bodyBytes := between(t, data, "<"+tc.env+":Body", "</"+tc.env+":Body>")
			assert.Equal(t, bodyBytes, d.ElementBytes(body))
			e := &d.Elements[body]
			assert.Equal(t, "</"+tc.env+":Body>", string(data[e.EndStart:e.End]))
			assert.True(t, bytes.HasSuffix(data[e.Start:e.StartEnd], []byte(`">`)))
			id := d.FindAttr(body, wsuNS, "Id")
			require.GreaterOrEqual(t, id, 0)
			assert.True(t, strings.HasPrefix(string(d.AttrValue(id, nil)), "id-"))
			assert.Equal(t, -1, d.FindAttr(body, "", "Id"), "Id must match by namespace")
			uri, ok := d.LookupPrefix(body, tc.env)
			assert.True(t, ok)
			assert.Equal(t, tc.envNS, uri)
			_, ok = d.LookupPrefix(body, "ds")
			assert.False(t, ok)
			assert.Equal(t, body, d.NextSibling(find(&d, tc.envNS, "Header", 0)))
			assert.Equal(t, -1, d.NextSibling(body))

			// DigestValue text: fast path returns the raw bytes.
			dv := find(&d, NamespaceDSig, "DigestValue", 0)
			require.GreaterOrEqual(t, dv, 0)
			want := between(t, data, "<ds:DigestValue>", "</ds:DigestValue>")
			want = want[len("<ds:DigestValue>") : len(want)-len("</ds:DigestValue>")]
			assert.Equal(t, want, d.Text(dv, nil))
			assert.Equal(t, -1, d.FirstChild(dv))
		})
	}
}

func TestEmptyElementSpans(t *testing.T) {
	in := []byte(`<r><a x="1"/><b></b></r>`)
	var d Document
	require.NoError(t, Scan(in, &d))
	a, b := d.Elements[1], d.Elements[2]
	assert.Equal(t, Element{Start: 3, StartEnd: 13, EndStart: 13, End: 13, Depth: 2, Parent: 0, Next: 2,
		Local: "a", Attrs: Range{0, 1}, NS: Range{0, 0}, Flags: FlagEmpty}, a)
	assert.Equal(t, `<a x="1"/>`, string(d.ElementBytes(1)))
	assert.Equal(t, Span{9, 10}, d.Attrs[0].Value)
	assert.Equal(t, byte('"'), d.Attrs[0].Quote)
	assert.Equal(t, Element{Start: 13, StartEnd: 16, EndStart: 16, End: 20, Depth: 2, Parent: 0, Next: 3,
		Local: "b", Attrs: Range{1, 1}, NS: Range{0, 0}}, b)
	assert.Equal(t, 1, d.FirstChild(0))
	assert.Equal(t, 2, d.NextSibling(1))
}

func TestFlagsAndMisc(t *testing.T) {
	in := []byte("<r><a><b>x&amp;y</b></a><c v=\"a\tb\"/><d><!--c--><e><![CDATA[z]]></e></d><f g=\"&#65;\"/></r>")
	var d Document
	require.NoError(t, Scan(in, &d))
	flags := map[string]Flags{}
	for _, e := range d.Elements {
		flags[e.Local] = e.Flags
	}
	assert.Equal(t, FlagComment|FlagCDATA|FlagRef, flags["r"])
	assert.Equal(t, FlagRef, flags["a"])
	assert.Equal(t, FlagRef|FlagTextRef, flags["b"])
	assert.Equal(t, FlagEmpty|FlagAttrNorm, flags["c"])
	assert.Equal(t, FlagComment|FlagCDATA, flags["d"])
	assert.Equal(t, FlagCDATA, flags["e"])
	assert.Equal(t, FlagEmpty|FlagRef|FlagAttrRef|FlagAttrNorm, flags["f"])
	require.Len(t, d.Misc, 2)
	assert.Equal(t, Node{Kind: NodeComment, Span: Span{39, 47}, Parent: 4}, d.Misc[0])
	assert.Equal(t, "<![CDATA[z]]>", string(d.Raw(d.Misc[1].Span)))
	assert.Equal(t, "x&y", string(d.Text(2, nil)))
	assert.Equal(t, "z", string(d.Text(5, nil)))
	assert.Equal(t, "a b", string(d.AttrValue(0, nil)))
	assert.Equal(t, AttrNorm, d.Attrs[0].Flags)
	assert.Equal(t, "A", string(d.AttrValue(1, nil)))
	assert.Equal(t, AttrNorm|AttrRef, d.Attrs[1].Flags)
}

func TestTextAcrossMarkup(t *testing.T) {
	in := []byte("<r>a\r\n<x>no</x>b<!-- c -->c<![CDATA[\rd&amp;]]>e&#xD;</r>")
	var d Document
	require.NoError(t, Scan(in, &d))
	assert.True(t, d.HasCR)
	assert.Equal(t, "a\nbc\nd&amp;e\r", string(d.Text(0, nil)))
	checkStdlib(t, &d)
}

func TestNamespaceResolution(t *testing.T) {
	in := []byte(`<p:r xmlns:p="urn:p" xmlns="urn:d" a="1" p:b="2" xml:lang="en">` +
		`<c xmlns:p="urn:q" p:b="3"/><d xmlns=""/><p:e/></p:r>`)
	var d Document
	require.NoError(t, Scan(in, &d))
	got := []Name{}
	for _, e := range d.Elements {
		got = append(got, Name{e.Space, e.Local})
	}
	assert.Equal(t, []Name{{"urn:p", "r"}, {"urn:d", "c"}, {"", "d"}, {"urn:p", "e"}}, got)
	assert.Equal(t, []string{"", "urn:p", NamespaceXML, "urn:q"},
		[]string{d.Attrs[0].Space, d.Attrs[1].Space, d.Attrs[2].Space, d.Attrs[3].Space})
	assert.Equal(t, []NSDecl{
		{Name: Span{5, 12}, Prefix: "p", URI: "urn:p", Value: Span{14, 19}, Quote: '"'},
		{Name: Span{21, 26}, Prefix: "", URI: "urn:d", Value: Span{28, 33}, Quote: '"'},
	}, d.NSDeclsOf(0))
	uri, ok := d.LookupPrefix(2, "")
	assert.True(t, ok)
	assert.Equal(t, "", uri)
	uri, ok = d.LookupPrefix(1, "p")
	assert.True(t, ok)
	assert.Equal(t, "urn:q", uri)
	uri, ok = d.LookupPrefix(3, "xml")
	assert.True(t, ok)
	assert.Equal(t, NamespaceXML, uri)
}

func TestDocumentReuseAllocs(t *testing.T) {
	data := readTestdata(t, "wss-soap11-signencr-gcm.xml")
	var d Document
	require.NoError(t, Scan(data, &d))
	allocs := testing.AllocsPerRun(100, func() {
		if err := Scan(data, &d); err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, allocs)
}

func TestDocumentPoolConcurrent(t *testing.T) {
	files := []string{"wss-soap11-sign-bst.xml", "wss-soap12-sign-bst.xml", "wss-soap11-signencr-gcm.xml"}
	var inputs [][]byte
	for _, f := range files {
		inputs = append(inputs, readTestdata(t, f))
	}
	pool := sync.Pool{New: func() any { return new(Document) }}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				in := inputs[(g+i)%len(inputs)]
				d := pool.Get().(*Document)
				if err := Scan(in, d); err != nil {
					t.Error(err)
				}
				if !bytes.Equal(d.ElementBytes(0), in[54:]) {
					t.Error("wrong root bytes")
				}
				pool.Put(d)
			}
		})
	}
	wg.Wait()
}

func TestResetReleasesLargeBuffers(t *testing.T) {
	var d Document
	require.NoError(t, Scan([]byte("<r>"+strings.Repeat("<a/>", retainMax+1)+"</r>"), &d))
	d.Reset()
	assert.Nil(t, d.Elements)
	assert.Nil(t, d.Data)
}
