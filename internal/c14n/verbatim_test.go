package c14n

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/wssgw/wssgw/internal/testvectors"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// general canonicalizes like Canonicalize without the verbatim copy of
// start tags.
func general(alg string, d *xmlscan.Document, elem int, pl []string) ([]byte, error) {
	m, comments, err := algMode(alg)
	if err != nil {
		return nil, err
	}
	s := &state{noVerbatim: true}
	if err := s.init(nil, d, m, pl, comments, nil); err != nil {
		return nil, err
	}
	if err := s.subtree(elem); err != nil {
		return nil, err
	}
	return s.buf, nil
}

// sameAsGeneral fails t unless Canonicalize and general agree on every
// element of d as the apex, for every algorithm, exclusive c14n with and
// without a PrefixList naming each declared prefix.
func sameAsGeneral(t *testing.T, d *xmlscan.Document) {
	t.Helper()
	pl := []string{"#default"}
	for _, ns := range d.NSDecls {
		if ns.Prefix != "" && len(pl) < MaxPrefixes {
			pl = append(pl, ns.Prefix)
		}
	}
	for elem := range d.Elements {
		for _, c := range []struct {
			alg string
			pl  []string
		}{{AlgExcC14N, nil}, {AlgExcC14N, pl}, {AlgExcC14NWithComments, nil}, {AlgC14N10, nil}, {AlgC14N11WithComments, nil}} {
			got, err1 := Canonicalize(c.alg, d, elem, c.pl, nil)
			want, err2 := general(c.alg, d, elem, c.pl)
			if (err1 == nil) != (err2 == nil) || !bytes.Equal(got, want) {
				t.Fatalf("%s %v apex %d: verbatim %q (%v), general %q (%v)", c.alg, c.pl, elem, got, err1, want, err2)
			}
		}
	}
}

// TestVerbatim: copying start tags as written (verbatim) gives the bytes
// of the general path, whatever in a tag keeps it from being copied
// (each ok/ document holds tags that can and tags that cannot).
func TestVerbatim(t *testing.T) {
	for _, tc := range []struct{ name, doc string }{
		{"ok/plain", `<r xmlns="urn:r"><a x="1" y="2">t</a><b/><c z="3"/></r>`},
		{"ok/prefixed", `<p:r xmlns:p="urn:p"><p:a p:x="1" y="2">t</p:a><p:b/></p:r>`},
		{"ok/unsorted", `<r xmlns:p="urn:p"><a y="1" x="2"/><a p:x="1" x="2"/><a x="2" p:x="1"/></r>`},
		{"ok/quotes-and-spaces", `<r><a x='1'/><a  x="1"/><a x="1" /><a x = "1"/><a` + "\t" + `x="1"/><a x="1"` + "\n" + `/><a/><a />` + "<a\r\n/></r>"},
		{"ok/normalized-values", `<r><a x="a&amp;b"/><a x="a` + "\t" + `b"/><a x="&#xA;"/><a x="'"/><a x='"'/><a x="&gt;"/><a x=">"/></r>`},
		{"ok/namespaces-not-in-effect", `<r xmlns:p="urn:p" xmlns:q="urn:q"><a><p:b q:x="1"/><b p:y="1"/></a><a xmlns=""><b/></a></r>`},
		{"ok/default-namespace", `<r xmlns="urn:1"><a xmlns="urn:2"><b/><c xmlns="urn:1"><d/></c></a><e xmlns=""><f/></e></r>`},
		{"ok/redeclared", `<p:r xmlns:p="urn:1"><p:a xmlns:p="urn:2"><p:b/></p:a><p:c/></p:r>`},
		{"ok/xml-attributes", `<r xml:lang="en"><a xml:space="preserve"/><b xml:lang="fr" x="1"/></r>`},
		{"ok/comments-cdata-text", `<r><a x="1"><!-- c --><![CDATA[<>&]]>x&gt;y` + "\r\n" + `</a></r>`},
		{"ok/same-local-names", `<r xmlns:a="urn:b" xmlns:b="urn:a"><e a:x="1" b:x="2" x="3"/><e x="3" b:x="2" a:x="1"/></r>`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sameAsGeneral(t, scan(t, []byte(tc.doc)))
		})
	}
}

// TestVerbatimVectors: the same over every XML file of the WSS4J vector
// set (messages of several profiles, as a partner's stack writes them).
func TestVerbatimVectors(t *testing.T) {
	root := testvectors.Path(t, "wss4j")
	files, err := filepath.Glob(filepath.Join(root, "*", "*.xml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no WSS4J vectors under %s (%v)", root, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(filepath.Dir(f))+"/"+filepath.Base(f), func(t *testing.T) {
			sameAsGeneral(t, scan(t, data))
		})
	}
}
