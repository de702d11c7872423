package xmlscan

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"testing"
)

// growBody returns msg with the first ns1:item of its body repeated until
// the message is at least size bytes: a large WS-Security request whose
// Security header is unchanged.
func growBody(tb testing.TB, msg []byte, size int) []byte {
	tb.Helper()
	start := bytes.Index(msg, []byte("<ns1:item "))
	end := bytes.Index(msg, []byte("</ns1:item>")) + len("</ns1:item>")
	if start < 0 || end < start {
		tb.Fatal("no ns1:item in message")
	}
	item := msg[start:end]
	var b bytes.Buffer
	b.Write(msg[:end])
	for b.Len()+len(msg)-end < size {
		b.Write(item)
	}
	b.Write(msg[end:])
	return b.Bytes()
}

// indent pretty-prints data: a CRLF and tabs before every tag, the way
// some stacks send it (this exercises the slow path of the character check
// and line-end handling).
func indent(data []byte) []byte {
	var b bytes.Buffer
	depth := 0
	for i, c := range data {
		if c == '<' {
			if data[i+1] == '/' {
				depth--
			}
			if i > 0 && data[i-1] == '>' {
				b.WriteString("\r\n")
				b.Write(bytes.Repeat([]byte("\t"), max(depth, 0)))
			}
			if data[i+1] != '/' && data[i+1] != '?' {
				depth++
			}
		}
		if c == '>' && data[i-1] == '/' {
			depth--
		}
		b.WriteByte(c)
	}
	return b.Bytes()
}

func benchInputs(tb testing.TB) map[string][]byte {
	small := readTestdata(tb, "wss-soap11-sign-bst.xml")
	large := growBody(tb, small, 100<<10)
	return map[string][]byte{
		"4KiB":            small,
		"100KiB":          large,
		"100KiB-indented": indent(large),
	}
}

func BenchmarkScan(b *testing.B) {
	for _, name := range []string{"4KiB", "100KiB", "100KiB-indented"} {
		data := benchInputs(b)[name]
		b.Run(fmt.Sprintf("%s/%d", name, len(data)), func(b *testing.B) {
			var d Document
			if err := Scan(data, &d); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if err := Scan(data, &d); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStdlibToken is the reference point: encoding/xml's Token loop,
// what etree pays before building its tree.
func BenchmarkStdlibToken(b *testing.B) {
	for _, name := range []string{"4KiB", "100KiB"} {
		data := benchInputs(b)[name]
		b.Run(fmt.Sprintf("%s/%d", name, len(data)), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				dec := xml.NewDecoder(bytes.NewReader(data))
				for {
					if _, err := dec.Token(); err != nil {
						break
					}
				}
			}
		})
	}
}

func TestBenchInputs(t *testing.T) {
	for name, data := range benchInputs(t) {
		var d Document
		if err := Scan(data, &d); err != nil {
			t.Fatal(name, err)
		}
		checkSpans(t, &d)
		checkStdlib(t, &d)
	}
}

// BenchmarkScanNewDocument scans into a new Document each time: what a
// message costs when the pooled Document was dropped (a sync.Pool is
// emptied by the garbage collector). B/op is the arrays' growth: with
// growElements and growAttrs about once their final size, not the sum of
// append's steps.
func BenchmarkScanNewDocument(b *testing.B) {
	small := readTestdata(b, "wss-soap11-sign-bst.xml")
	for _, c := range []struct {
		name string
		size int
	}{{"100KiB", 100 << 10}, {"1MiB", 1 << 20}} {
		data := growBody(b, small, c.size)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				var d Document
				if err := Scan(data, &d); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(len(d.Elements)), "elements")
			}
		})
	}
}
