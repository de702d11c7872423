package template

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// variedEnvelope is benchEnvelope's list with values whose lengths vary
// from item to item, as real lists' names, amounts and notes do: a
// sibling's parts rarely have its predecessor's lengths (issue 14).
func variedEnvelope(items int) []byte {
	r := rand.New(rand.NewPCG(14, 14))
	words := []string{"red", "tile", "order", "for", "the", "kitchen", "wall", "blue", "glazed", "x", "delivery", "after", "noon"}
	var b strings.Builder
	b.WriteString(`<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Header/><soap:Body><m:Order xmlns:m="urn:example:orders">`)
	for range items {
		var note strings.Builder
		for k := range 1 + r.IntN(6) {
			if k > 0 {
				note.WriteByte(' ')
			}
			note.WriteString(words[r.IntN(len(words))])
		}
		fmt.Fprintf(&b, `<m:Item sku="S-%d" qty="%d"><m:Note>%s</m:Note></m:Item>`, r.IntN(1<<uint(4+r.IntN(20))), 1+r.IntN(1<<uint(r.IntN(12))), note.String())
	}
	b.WriteString(`</m:Order></soap:Body></soap:Envelope>`)
	return []byte(b.String())
}

// BenchmarkFastBodyVaried is BenchmarkFastBody on variedEnvelope.
func BenchmarkFastBodyVaried(b *testing.B) {
	for _, c := range []struct {
		name  string
		items int
	}{{"4KiB", 55}, {"100KiB", 1350}, {"1MiB", 14000}} {
		b.Run(c.name, func(b *testing.B) { benchFastBody(b, variedEnvelope(c.items)) })
	}
}
