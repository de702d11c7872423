package xmlscan

import (
	"strings"
	"testing"
	"time"
)

// BenchmarkScanSIMD prints the gate's time with its SIMD steps over its
// time without them (simd/loops), measured alternately in one run, on
// ASCII text and on text that is mostly multi-byte characters (CJK, a
// legitimate payload), where each character stops the 32-byte step: the
// steps must not make such text slower than the loops.
func BenchmarkScanSIMD(b *testing.B) {
	for _, c := range []struct{ name, unit string }{
		{"ascii", "Invoice line 42, qty 7; "},
		{"cjk", "請求書の明細行四十二、数量七。"},
		{"mixed", "Straße 12, Göteborg; 請求 "},
	} {
		var sb strings.Builder
		sb.WriteString(`<r xmlns:p="urn:x">`)
		for sb.Len() < 64<<10 {
			sb.WriteString(`<p:item code="` + c.unit + `">` + strings.Repeat(c.unit, 8) + `</p:item>`)
		}
		sb.WriteString(`</r>`)
		msg := []byte(sb.String())
		b.Run(c.name, func(b *testing.B) {
			var d Document
			var ts, tl time.Duration
			b.ReportAllocs()
			b.SetBytes(int64(2 * len(msg)))
			for b.Loop() {
				t0 := time.Now()
				if err := Scan(msg, &d); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				withoutSIMD(func() {
					if err := Scan(msg, &d); err != nil {
						b.Fatal(err)
					}
				})
				ts, tl = ts+t1.Sub(t0), tl+time.Since(t1)
			}
			b.ReportMetric(float64(ts)/float64(tl), "simd/loops")
		})
	}
}
