package mime

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
)

func FuzzRead(f *testing.F) {
	f.Add(ctMTOM, pkg(part(hdrRoot, envXOP), att("a@x", "AAAA"), att("b@x", strings.Repeat("b", 40))))
	f.Add(ctSwA, pkg(part("Content-Type: text/xml", "<e/>"), att("a", "x\r\n--")))
	f.Add(ctMTOM, "pre\r\n--B \r\n"+part(hdrRoot, envXOP)+"\r\n--B--")
	f.Add(ctMTOM, pkg(part(hdrRoot, envXOP), att("a@x", "1"), att("A@x", "2")))
	f.Add(ctMTOM, "--B\r\n"+part(hdrRoot, envXOP)+"\r\n--B\r\n"+att("a@x", strings.Repeat("t", 50)))
	f.Add(`multipart/related; type="application/xop+xml"; boundary="=_x"; start-info="text/xml"`,
		"--=_x\r\nContent-Type: application/xop+xml; type=\"text/xml\"\r\n\r\n<e/>\r\n--=_x--")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, ct, body string) {
		lim := DefaultLimits()
		lim.MaxParts, lim.MaxHeaderBytes, lim.SpoolThreshold, lim.SpoolDir = 8, 1024, 16, dir
		p, err := Read(context.Background(), strings.NewReader(body), ct, lim)
		if err != nil {
			if p != nil {
				t.Fatal("a package with an error")
			}
			requireEmptyDir(t, dir)
			return
		}
		defer p.Close()
		if p.Root == nil {
			t.Fatal("no root")
		}
		roundTrip(t, p, lim)
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		requireEmptyDir(t, dir)
	})
}

// roundTrip checks that the Writer output reads back to the same parts.
func roundTrip(t *testing.T, p *Package, lim Limits) {
	ct, wt := p.Writer(p.RootBytes)
	var out bytes.Buffer
	if _, err := wt.WriteTo(&out); err != nil {
		t.Fatal(err)
	}
	lim.MaxTotalSize = int64(out.Len())
	q, err := Read(context.Background(), &out, ct, lim)
	if err != nil {
		t.Fatalf("re-assembled package rejected: %v", err)
	}
	defer q.Close()
	if !bytes.Equal(p.RootBytes, q.RootBytes) || len(p.Attachments) != len(q.Attachments) {
		t.Fatal("round trip changed the root or the number of parts")
	}
	for i, a := range p.Attachments {
		b := q.Attachments[i]
		if a.ContentID() != b.ContentID() || a.ContentType() != b.ContentType() || read(t, a) != read(t, b) {
			t.Fatalf("round trip changed attachment %d", i)
		}
	}
}

func read(t *testing.T, p *Part) string {
	rc, err := p.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func FuzzCIDFromURL(f *testing.F) {
	for _, s := range []string{"cid:a@x", "CID:http%3A%2F%2Ft%2F1", "cid:%", "http://x", "cid:a%2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, href string) {
		id, err := CIDFromURL(href)
		if err != nil {
			return
		}
		// Fully %-encoded, the id decodes to itself.
		var enc strings.Builder
		for i := 0; i < len(id); i++ {
			fmt.Fprintf(&enc, "%%%02X", id[i])
		}
		again, err := CIDFromURL("cid:" + enc.String())
		if err != nil || again != id {
			t.Fatalf("%q -> %q, re-encoded -> %q, %v", href, id, again, err)
		}
	})
}
