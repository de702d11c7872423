package testmime

import (
	"io"
	"net/textproto"
	"strings"
	"testing"
)

// TestParts: a missing part is an untyped nil, Replace changes what
// Attachment returns, and a Clone keeps its own list of parts.
func TestParts(t *testing.T) {
	a := New(NewPart("a@x", "text/plain", []byte("one")))
	if p, ok := a.Attachment("none"); ok || p != nil {
		t.Fatalf("missing part: %v %v", p, ok)
	}
	c := a.Clone()
	if err := a.Replace("a@x", textproto.MIMEHeader{"Content-Type": {"image/png"}}, strings.NewReader("two")); err != nil {
		t.Fatal(err)
	}
	p, ok := a.Attachment("a@x")
	if !ok || p.ContentType() != "image/png" || p.Size() != 3 {
		t.Fatalf("replaced part: %+v", p)
	}
	r, err := p.Open()
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := io.ReadAll(r); string(got) != "two" {
		t.Fatalf("replaced content %q", got)
	}
	if string(c.ByID["a@x"].Data) != "one" || c.ByID["a@x"].ContentID() != "a@x" {
		t.Fatal("the clone saw the replacement")
	}
}
