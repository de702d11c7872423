package c14n

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/wssgw/wssgw/internal/xmlscan"
)

func TestCanonicalizeToReplacing(t *testing.T) {
	const doc = `<a xmlns="urn:a"><b><x:Include xmlns:x="urn:xop" href="cid:1"/></b><c x="1">t</c><x:Include xmlns:x="urn:xop"/></a>`
	var d xmlscan.Document
	if err := xmlscan.Scan([]byte(doc), &d); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	claim := func(write func(io.Writer) error) Replacer {
		return func(i int) (func(io.Writer) error, bool) {
			if d.Elements[i].Local != "Include" {
				return nil, false
			}
			return write, true
		}
	}
	tests := []struct {
		name    string
		replace Replacer
		want    string
		err     error
	}{
		{"ok/replaced", claim(func(w io.Writer) error { _, err := io.WriteString(w, "QUJD"); return err }),
			`<a xmlns="urn:a"><b>QUJD</b><c x="1">t</c>QUJD</a>`, nil},
		{"ok/none-claimed", func(int) (func(io.Writer) error, bool) { return nil, false },
			`<a xmlns="urn:a"><b><x:Include xmlns:x="urn:xop" href="cid:1"></x:Include></b><c x="1">t</c><x:Include xmlns:x="urn:xop"></x:Include></a>`, nil},
		{"fail/writer-error", claim(func(io.Writer) error { return boom }), "", boom},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := CanonicalizeToReplacing(&out, AlgExcC14N, &d, 0, nil, tc.replace)
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if tc.err == nil && out.String() != tc.want {
				t.Fatalf("got  %s\nwant %s", out.String(), tc.want)
			}
		})
	}
	// A pooled state must not keep the Replacer for the next caller.
	var plain bytes.Buffer
	if err := CanonicalizeTo(&plain, AlgExcC14N, &d, 0, nil); err != nil || !bytes.Contains(plain.Bytes(), []byte("x:Include")) {
		t.Fatalf("plain canonicalization after a replacing one: %v %s", err, plain.String())
	}
}
