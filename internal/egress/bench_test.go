package egress

import (
	"bytes"
	"context"
	stdmime "mime"
	"mime/multipart"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/wssgw/wssgw/internal/mime"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/testmime"
)

// BenchmarkSecure: securing one small request (Timestamp, BST, RSA-2048
// signature over Body and Timestamp).
func BenchmarkSecure(b *testing.B) {
	c := newPKI(b).client(b, nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Secure([]byte(request)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerify: verifying one small signed response on the DOM engine.
func BenchmarkVerify(b *testing.B) {
	p := newPKI(b)
	c := p.client(b, nil)
	req, err := c.Secure([]byte(request))
	if err != nil {
		b.Fatal(err)
	}
	o := signer.DefaultOptions()
	o.Signer, o.Certificate = p.partner.Key, p.partner.Cert
	resp, err := signer.Secure([]byte(answer), o)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Verify(context.Background(), req, resp, time.Now()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifyStreamed: reading (attachment spooled) and verifying a
// 64 MiB streamed trailing-signature MTOM response from another wssgw.
// alloc/attachment is the bytes allocated per byte of attachment: far
// below 1 means the response is not held in memory.
func BenchmarkVerifyStreamed(b *testing.B) {
	const size = 64 << 20
	p := newPKI(b)
	c := p.client(b, nil)
	req, err := c.Secure([]byte(request))
	if err != nil {
		b.Fatal(err)
	}
	in, boundary := testmime.File(b, strings.Repeat("0123456789abcdef", size/16))
	o := signer.StreamOptions{Options: signer.DefaultOptions()}
	o.Signer, o.Certificate = p.partner.Key, p.partner.Cert
	s, err := signer.NewStream(o)
	if err != nil {
		b.Fatal(err)
	}
	var msg bytes.Buffer
	if err := s.Sign(&msg, &testmime.RawParts{R: multipart.NewReader(in, boundary)}); err != nil {
		b.Fatal(err)
	}
	ct := stdmime.FormatMediaType("multipart/related", map[string]string{
		"type": "application/xop+xml", "start": "<root@x>", "start-info": "text/xml", "boundary": s.Boundary(),
	})
	lim := mime.DefaultLimits()
	lim.SpoolDir = b.TempDir()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.SetBytes(int64(msg.Len()))
	b.ReportAllocs()
	for b.Loop() {
		pkg, err := mime.Read(context.Background(), bytes.NewReader(msg.Bytes()), ct, lim)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.VerifyPackage(context.Background(), req, pkg, time.Now()); err != nil {
			b.Fatal(err)
		}
		pkg.Close()
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/size, "alloc/attachment")
}
