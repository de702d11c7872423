package c14n

import (
	"bytes"
	"crypto/sha256"
	"testing"

	"github.com/wssgw/wssgw/internal/xmlscan"
)

// benchMessage returns the WSS4J sign-bst message (4.6 KB) with its Body
// grown by repeating the order items until the message has at least size
// bytes.
func benchMessage(b *testing.B, size int) (*xmlscan.Document, int) {
	msg := readVector(b, "wss4j/sign-bst/0000.xml")
	start := bytes.Index(msg, []byte("<ns1:item "))
	end := bytes.LastIndex(msg, []byte("</ns1:item>")) + len("</ns1:item>")
	items := msg[start:end]
	for len(msg) < size {
		grown := append([]byte(nil), msg[:end]...)
		grown = append(grown, items...)
		msg = append(grown, msg[end:]...)
		end += len(items)
	}
	sc, err := xmlscan.NewScanner(xmlscan.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	d := new(xmlscan.Document)
	if err := sc.Scan(msg, d); err != nil {
		b.Fatal(err)
	}
	return d, find(d, "http://schemas.xmlsoap.org/soap/envelope/", "Body", 0)
}

func BenchmarkExclusiveBody(b *testing.B) {
	for _, bc := range []struct {
		name string
		size int
	}{{"4KiB", 0}, {"100KiB", 100 << 10}} {
		d, body := benchMessage(b, bc.size)
		pl := []string{"soapenv"}
		b.Run(bc.name+"/append", func(b *testing.B) {
			var buf []byte
			b.ReportAllocs()
			b.SetBytes(int64(d.Elements[body].End - d.Elements[body].Start))
			for b.Loop() {
				buf, _ = Exclusive(d, body, pl, false, buf[:0])
			}
		})
		b.Run(bc.name+"/sha256", func(b *testing.B) {
			h := sha256.New()
			b.ReportAllocs()
			b.SetBytes(int64(d.Elements[body].End - d.Elements[body].Start))
			for b.Loop() {
				h.Reset()
				if err := ExclusiveTo(h, d, body, pl, false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
