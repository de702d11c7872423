package c14n

import (
	"bytes"
	"errors"
	"testing"

	"github.com/wssgw/wssgw/internal/xmlscan"
)

// rescanner accepts canonical forms, whose apex may carry more namespace
// declarations than any input element did.
var rescanner, _ = xmlscan.NewScanner(xmlscan.Config{Limits: xmlscan.Limits{MaxNSDeclsPerElement: 1 << 20, MaxAttrs: 1 << 20}})

// FuzzExclusive: no panic; the canonical form passes the gate; it equals
// the general path's (no verbatim start tags) and the streamed form; canonicalizing it again (its root, with the same
// PrefixList) gives the same bytes. The same properties are checked for
// inclusive C14N 1.0 and 1.1.
func FuzzExclusive(f *testing.F) {
	for _, s := range []string{
		`<a/>`,
		"<r xmlns=\"urn:d\" xmlns:p=\"urn:p\" xml:lang=\"en\"><p:a x=\"1&#9;\r\n\" p:y='\"'>t&amp;\r<![CDATA[<]]><!--c--><b xmlns=\"\"/></p:a></r>",
		`<p:r xmlns:p="urn:1"><a xmlns:p="urn:2"><p:b xmlns:p="urn:1"/></a></p:r>`,
		`<r xml:base="http://x/" xml:id="i"><a xml:lang="fr"/></r>`,
		xmlsecDoc,
	} {
		f.Add([]byte(s), uint16(1), uint8(3), false)
	}
	f.Fuzz(func(t *testing.T, data []byte, sel uint16, plSel uint8, comments bool) {
		var d xmlscan.Document
		sc, _ := xmlscan.NewScanner(xmlscan.Config{})
		if sc.Scan(data, &d) != nil {
			return
		}
		elem := int(sel) % len(d.Elements)
		// A PrefixList drawn from the document's own prefixes.
		var pl []string
		if plSel&1 != 0 {
			pl = append(pl, "#default")
		}
		for k, ns := range d.NSDecls {
			if ns.Prefix != "" && plSel&(2<<(k%7)) != 0 && len(pl) < MaxPrefixes {
				pl = append(pl, ns.Prefix)
			}
		}
		check(t, &d, elem, AlgExcC14N, comments, pl)
		check(t, &d, elem, AlgC14N10, comments, nil)
		check(t, &d, elem, AlgC14N11, comments, nil)
	})
}

func check(t *testing.T, d *xmlscan.Document, elem int, alg string, comments bool, pl []string) {
	if comments {
		if alg == AlgExcC14N {
			alg = AlgExcC14NWithComments
		} else {
			alg += "#WithComments"
		}
	}
	out, err := Canonicalize(alg, d, elem, pl, nil)
	if err != nil {
		if errors.Is(err, ErrRelativeNamespace) || errors.Is(err, ErrUnsupported) && (alg == AlgC14N11 || alg == AlgC14N11WithComments) {
			return
		}
		t.Fatalf("%s: %v", alg, err)
	}
	if want, err := general(alg, d, elem, pl); err != nil || !bytes.Equal(want, out) {
		t.Fatalf("%s: verbatim start tags differ from the general path (%v)\n%q\n%q", alg, err, out, want)
	}
	var sb sinkBuffer
	if err := CanonicalizeTo(&sb, alg, d, elem, pl); err != nil || !bytes.Equal(sb, out) {
		t.Fatalf("%s: streamed form differs (%v)", alg, err)
	}
	var d2 xmlscan.Document
	if err := rescanner.Scan(out, &d2); err != nil {
		t.Fatalf("%s: canonical form rejected by the gate: %v\n%q", alg, err, out)
	}
	again, err := Canonicalize(alg, &d2, 0, pl, nil)
	if err != nil || !bytes.Equal(again, out) {
		t.Fatalf("%s: not idempotent (%v)\n%q\n%q", alg, err, out, again)
	}
}
