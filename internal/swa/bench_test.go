package swa

import (
	"bytes"
	"crypto/sha256"
	"io"
	"testing"
)

// BenchmarkContent measures the transforms per media type over 1 MiB,
// into a SHA-256 digest as in use.
func BenchmarkContent(b *testing.B) {
	text := bytes.Repeat([]byte("a line of text\n"), 1<<16)
	xml := append(append([]byte("<a>"), bytes.Repeat([]byte("<b c='1'>text</b>"), 1<<15)...), "</a>"...)
	for _, bc := range []struct {
		name, ct string
		data     []byte
	}{
		{"binary", "application/octet-stream", text},
		{"text", "text/plain", text},
		{"xml", "text/xml", xml},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.data)))
			o := Options{MaxXML: 64 << 20}
			h := sha256.New()
			for b.Loop() {
				h.Reset()
				w, err := NewWriter(h, ContentTransform, hdr(bc.ct), o)
				if err != nil {
					b.Fatal(err)
				}
				for p := bc.data; len(p) > 0; p = p[min(32<<10, len(p)):] {
					if _, err := w.Write(p[:min(32<<10, len(p))]); err != nil {
						b.Fatal(err)
					}
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkWriteHeaders measures the Complete transform's header part.
func BenchmarkWriteHeaders(b *testing.B) {
	h := hdr(`Text/Plain; Charset=UTF-8; name="report.txt"`)
	h.Set("Content-Disposition", "attachment; filename=report.txt")
	b.ReportAllocs()
	for b.Loop() {
		if err := WriteHeaders(io.Discard, h); err != nil {
			b.Fatal(err)
		}
	}
}
