package template

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/wssgw/wssgw/bench/proc"
	"github.com/wssgw/wssgw/internal/c14n"
	"github.com/wssgw/wssgw/internal/xmlscan"
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
		b.Run(c.name, func(b *testing.B) {
			env := variedEnvelope(c.items)
			var ref xmlscan.Document
			if err := xmlscan.Scan(env, &ref); err != nil {
				b.Fatal(err)
			}
			body := bodyOf(&ref)
			ctx := newFastCtx(&ref, body, nil)
			start := bytes.Index(env, []byte("<soap:Body>")) + len("<soap:Body>")
			end := bytes.LastIndex(env, []byte("</soap:Body>"))
			lim := xmlscan.DefaultConfig().Limits
			fb := &fastBody{only: xmlscan.DefaultConfig().ElementOnly}
			canon, err := c14n.Canonicalize(c14n.AlgExcC14N, &ref, body, nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			// The pass hashes the Body's content: the canonical Body
			// without its own start and end tags.
			inner := canon[bytes.IndexByte(canon, '>')+1 : len(canon)-len("</soap:Body>")]
			h := sha256.New()
			h.Write(inner)
			want := h.Sum(nil)
			b.ReportAllocs()
			b.SetBytes(int64(end - start))
			var cFast, cHash time.Duration
			for b.Loop() {
				c0 := proc.SelfCPU()
				h.Reset()
				if !fb.run(env, start, end, ctx, &lim, h) {
					b.Fatal("not handled")
				}
				got := h.Sum(nil)
				c1 := proc.SelfCPU()
				if !bytes.Equal(got, want) {
					b.Fatal("digest differs from exclusive C14N's")
				}
				h.Reset()
				h.Write(canon)
				h.Sum(nil)
				cFast += c1 - c0
				cHash += proc.SelfCPU() - c1
			}
			b.ReportMetric(float64(cFast)/float64(cHash), "cpu-fast/sha256")
			b.ReportMetric(float64(len(env)), "bytes")
		})
	}
}
