package xmlscan

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/testvectors"
)

// view is what the differential compares: element names, attributes and
// direct text, in document order.
type view struct {
	Space, Local string
	Attrs        []string // "{space}local=value", namespace declarations excluded
	Text         string
}

// wsToSpace maps TAB, LF and CR to a space. encoding/xml does not apply
// attribute-value normalization (XML 1.0 §3.3.3), the gate does; after this
// mapping both must agree.
func wsToSpace(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
}

// stdlibView decodes data with encoding/xml in Strict mode (the tokenizer
// etree uses, plus namespace translation).
func stdlibView(data []byte) ([]view, error) {
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = true
	var out []view
	var stack []int
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			if len(out) == 0 {
				return nil, fmt.Errorf("no element")
			}
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			v := view{Space: t.Name.Space, Local: t.Name.Local}
			for _, a := range t.Attr {
				if a.Name.Space == "xmlns" || a.Name.Space == "" && a.Name.Local == "xmlns" {
					continue
				}
				v.Attrs = append(v.Attrs, "{"+a.Name.Space+"}"+a.Name.Local+"="+wsToSpace(a.Value))
			}
			stack = append(stack, len(out))
			out = append(out, v)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				out[stack[len(stack)-1]].Text += string(t)
			}
		}
	}
}

// gateView builds the same view from a Document.
func gateView(d *Document) []view {
	out := make([]view, len(d.Elements))
	var buf []byte
	for i := range d.Elements {
		e := &d.Elements[i]
		v := view{Space: e.Space, Local: e.Local, Text: string(d.Text(i, buf))}
		for j := e.Attrs.Start; j < e.Attrs.End; j++ {
			a := &d.Attrs[j]
			v.Attrs = append(v.Attrs, "{"+a.Space+"}"+a.Local+"="+wsToSpace(string(d.AttrValue(j, buf))))
		}
		out[i] = v
	}
	return out
}

// diffStdlib returns an error if encoding/xml rejects a document the gate
// accepted, or reads it differently: the gate must be stricter, never
// looser, and must agree on everything it accepts.
func diffStdlib(d *Document) error {
	want, err := stdlibView(d.Data)
	if err != nil {
		return fmt.Errorf("gate accepted what encoding/xml rejects: %w", err)
	}
	got := gateView(d)
	if len(got) != len(want) {
		return fmt.Errorf("element count: gate %d, encoding/xml %d", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Space != w.Space || g.Local != w.Local || g.Text != w.Text ||
			strings.Join(g.Attrs, "\x00") != strings.Join(w.Attrs, "\x00") {
			return fmt.Errorf("element %d differs:\n gate   %q\n stdlib %q", i, g, w)
		}
	}
	return nil
}

func checkStdlib(t testing.TB, d *Document) {
	t.Helper()
	require.NoError(t, diffStdlib(d))
}

// spanError checks the structural invariants of an accepted Document.
func spanError(d *Document) error {
	data := d.Data
	if len(d.Elements) == 0 {
		return fmt.Errorf("no elements")
	}
	prevStart := -1
	for i := range d.Elements {
		e := &d.Elements[i]
		if !(prevStart < e.Start && e.Start < e.StartEnd && e.StartEnd <= e.EndStart && e.EndStart <= e.End && e.End <= len(data)) {
			return fmt.Errorf("element %d: bad offsets %+v", i, e)
		}
		prevStart = e.Start
		qn := data[e.Start+1 : e.Start+1+e.QNameLen()]
		wantQN := e.Local
		if e.Prefix != "" {
			wantQN = e.Prefix + ":" + e.Local
		}
		if string(qn) != wantQN || data[e.StartEnd-1] != '>' || data[e.End-1] != '>' {
			return fmt.Errorf("element %d: tag bytes %q", i, data[e.Start:e.StartEnd])
		}
		if e.Flags&FlagEmpty != 0 {
			if e.EndStart != e.StartEnd || e.End != e.StartEnd || data[e.StartEnd-2] != '/' || e.Next != i+1 {
				return fmt.Errorf("element %d: bad empty element %+v", i, e)
			}
		} else if !bytes.HasPrefix(data[e.EndStart:], append([]byte("</"), qn...)) {
			return fmt.Errorf("element %d: end tag %q", i, data[e.EndStart:e.End])
		}
		if err := parentError(d, i); err != nil {
			return err
		}
		if err := attrSpanError(d, i); err != nil {
			return err
		}
	}
	for _, n := range d.Misc {
		p := &d.Elements[n.Parent]
		if n.Span.Start < p.StartEnd || n.Span.End > p.EndStart {
			return fmt.Errorf("misc node %+v outside its parent", n)
		}
		if n.Kind == NodeComment && p.Flags&FlagComment == 0 || n.Kind == NodeCDATA && p.Flags&FlagCDATA == 0 {
			return fmt.Errorf("misc node %+v not flagged on its parent", n)
		}
	}
	if d.Elements[0].Parent != -1 || d.Elements[0].Next != len(d.Elements) || d.Elements[0].Depth != 1 {
		return fmt.Errorf("bad root %+v", d.Elements[0])
	}
	return nil
}

// parentError checks that element i nests inside its parent's content.
func parentError(d *Document, i int) error {
	e := &d.Elements[i]
	if e.Next <= i || e.Next > len(d.Elements) {
		return fmt.Errorf("element %d: bad Next %d", i, e.Next)
	}
	if e.Parent < 0 {
		if i != 0 {
			return fmt.Errorf("element %d: second root", i)
		}
		return nil
	}
	p := &d.Elements[e.Parent]
	if e.Parent >= i || e.Start < p.StartEnd || e.End > p.EndStart || e.Depth != p.Depth+1 || i >= p.Next {
		return fmt.Errorf("element %d not inside parent %d", i, e.Parent)
	}
	if p.Flags&(e.Flags&subtreeFlags) != e.Flags&subtreeFlags {
		return fmt.Errorf("element %d: subtree flags not propagated", i)
	}
	return nil
}

// attrSpanError checks that attribute and declaration spans lie in the
// start tag and are delimited by their quotes.
func attrSpanError(d *Document, i int) error {
	e := &d.Elements[i]
	check := func(name, val Span, quote byte) error {
		if name.Start <= e.Start || name.End > val.Start || val.End >= e.StartEnd ||
			d.Data[val.Start-1] != quote || d.Data[val.End] != quote {
			return fmt.Errorf("element %d: bad attribute spans %v %v", i, name, val)
		}
		return nil
	}
	for _, a := range d.AttrsOf(i) {
		if err := check(a.Name, a.Value, a.Quote); err != nil {
			return err
		}
	}
	for _, ns := range d.NSDeclsOf(i) {
		if err := check(ns.Name, ns.Value, ns.Quote); err != nil {
			return err
		}
	}
	return nil
}

func checkSpans(t testing.TB, d *Document) {
	t.Helper()
	require.NoError(t, spanError(d))
}

// FuzzScan checks that Scan never panics, that every accepted document has
// consistent spans and is read identically by encoding/xml, that a reused
// Document gives the same result as a fresh one, that the gate without its
// SIMD steps gives the same Document or error as with them, and that
// rejections carry a kind from the closed set.
func FuzzScan(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.xml"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		require.NoError(f, err)
		f.Add(b)
	}
	for _, tc := range append(append(append([]scanCase{}, okCases...), failCases...), elementOnlyCases...) {
		f.Add([]byte(tc.in))
	}
	sc, err := NewScanner(DefaultConfig())
	require.NoError(f, err)
	var reused Document
	f.Fuzz(func(t *testing.T, data []byte) {
		var d Document
		err := sc.Scan(data, &d)
		err2 := sc.Scan(data, &reused)
		require.Equal(t, err, err2, "reused Document disagrees")
		if simdOn() {
			var loops Document
			var err3 error
			withoutSIMD(func() { err3 = sc.Scan(data, &loops) })
			require.Equal(t, err, err3, "the gate without SIMD disagrees")
			if err == nil {
				require.Empty(t, docDiff(&loops, &d), "the gate without SIMD disagrees")
			}
		}
		if err != nil {
			k := kindOf(err)
			require.NotEqual(t, "unknown", k.String(), "%v", err)
			var e *Error
			require.ErrorAs(t, err, &e)
			require.True(t, e.Offset >= 0 && e.Offset <= len(data), "offset %d of %d", e.Offset, len(data))
			return
		}
		require.Equal(t, d.Elements, reused.Elements)
		require.Equal(t, len(d.Attrs), len(reused.Attrs))
		if len(d.Attrs) > 0 {
			require.Equal(t, d.Attrs, reused.Attrs)
		}
		checkSpans(t, &d)
		checkStdlib(t, &d)
	})
}

// TestSharedVectors runs the gate over every XML file of the interop test
// vectors (the committed WSS4J messages; xmlsec's W3C interop sets when
// ../shared has them): whatever it accepts must have consistent spans and
// read the same in encoding/xml.
func TestSharedVectors(t *testing.T) {
	for _, tc := range []struct {
		set         string
		minAccepted int
	}{
		{"wss4j", 8},
		{"xmlsec", 100},
	} {
		t.Run("ok/"+tc.set, func(t *testing.T) {
			root := testvectors.Path(t, tc.set)
			kinds := scanTree(t, root)
			t.Logf("outcomes: %v", kinds)
			assert.GreaterOrEqual(t, kinds["accepted"], tc.minAccepted)
		})
	}
}

// scanTree gates every .xml file under root and counts the outcomes: the
// error kinds, and "accepted" for documents that pass with consistent
// spans and read the same in encoding/xml.
func scanTree(t *testing.T, root string) map[string]int {
	t.Helper()
	sc, err := NewScanner(Config{})
	require.NoError(t, err)
	kinds := map[string]int{}
	var d Document
	err = filepath.WalkDir(root, func(path string, de os.DirEntry, err error) error {
		if err != nil || de.IsDir() || filepath.Ext(path) != ".xml" {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := sc.Scan(data, &d); err != nil {
			kinds[kindOf(err).String()]++
			return nil
		}
		kinds["accepted"]++
		require.NoError(t, spanError(&d), path)
		require.NoError(t, diffStdlib(&d), path)
		return nil
	})
	require.NoError(t, err)
	return kinds
}
