package xmlscan

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// TestGrowOnce: a document of several thousand elements scanned into a new
// Document grows its arrays once past growAt, to no more than the input's
// bound (start tags, attributes), and records exactly what a scan into a
// Document with room to spare records.
func TestGrowOnce(t *testing.T) {
	var b strings.Builder
	b.WriteString(`<r xmlns:p="urn:p">`)
	for i := range 5000 {
		switch i % 3 {
		case 0:
			b.WriteString(`<p:a x="1" p:y='2'>t</p:a>`)
		case 1:
			b.WriteString(`<b z="a=b"/><!-- <c> -->`)
		default:
			b.WriteString(`<c>x = "y"</c>`)
		}
	}
	b.WriteString(`</r>`)
	data := []byte(b.String())
	var fresh, roomy Document
	roomy.Elements = make([]Element, 0, 20000)
	roomy.Attrs = make([]Attr, 0, 20000)
	for _, d := range []*Document{&fresh, &roomy} {
		if err := Scan(data, d); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(fresh.Elements, roomy.Elements) || !slices.Equal(fresh.Attrs, roomy.Attrs) {
		t.Fatal("a new Document records differently from a roomy one")
	}
	tags := bytes.Count(data, []byte("<")) - bytes.Count(data, []byte("</"))
	if c := cap(fresh.Elements); c > tags || c >= 2*len(fresh.Elements) {
		t.Errorf("Elements: cap %d for %d elements, bound %d", c, len(fresh.Elements), tags)
	}
	if c := cap(fresh.Attrs); c > bytes.Count(data, []byte("=")) || c >= 2*len(fresh.Attrs) {
		t.Errorf("Attrs: cap %d for %d attributes", c, len(fresh.Attrs))
	}
}

// TestGrowAllocs: past growAt the arrays grow once, so a document ten
// times larger costs no more allocations (append alone took ten more
// steps of a quarter each).
func TestGrowAllocs(t *testing.T) {
	allocs := func(n int) float64 {
		data := []byte(`<r>` + strings.Repeat(`<a x="1"/>`, n) + `</r>`)
		return testing.AllocsPerRun(3, func() {
			var d Document
			if err := Scan(data, &d); err != nil {
				t.Fatal(err)
			}
		})
	}
	if small, large := allocs(2000), allocs(20000); large != small {
		t.Errorf("%.0f allocations for 2,000 elements, %.0f for 20,000", small, large)
	}
}
