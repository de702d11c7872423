package signer

import (
	"bytes"
	"testing"
)

// FuzzStream feeds arbitrary packages to the streaming signer. Whatever
// the input, a signature part is only ever written after a clean end of
// the package, and a package that fails never ends with the close
// delimiter.
func FuzzStream(f *testing.F) {
	p := testPKI(f)
	atts := testAtts()
	var seed bytes.Buffer
	ct, err := writePackage(&seed, mtomRoot(atts[0].cid, atts[1].cid), atts[:2])
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed.Bytes())
	f.Add(seed.Bytes()[:seed.Len()/2])
	f.Add([]byte("--x\r\n\r\n<a/>\r\n--x--"))
	f.Fuzz(func(t *testing.T, pkg []byte) {
		s, err := NewStream(streamOpts(p.ec, AttachXOP))
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		err = s.Sign(&out, newStdParts(t, bytes.NewReader(pkg), ct))
		signed := bytes.Contains(out.Bytes(), []byte("<"+s.SignatureCID()+">"))
		closed := bytes.Contains(out.Bytes(), []byte("--"+s.Boundary()+"--"))
		if err != nil && (signed || closed) {
			t.Fatalf("failed (%v) but wrote a signature part or the close delimiter", err)
		}
		if err == nil && (!signed || !closed) {
			t.Fatal("succeeded without a signature part and close delimiter")
		}
	})
}

// FuzzCID: escapeCID and unescapeCID round-trip every Content-ID, and the
// escaped form needs no further escaping in an attribute.
func FuzzCID(f *testing.F) {
	for _, s := range []string{"a@b", "report 2@example", "%41", "<>\"&", "\xff\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cid string) {
		e := escapeCID(cid)
		for i := 0; i < len(e); i++ {
			if c := e[i]; c <= ' ' || c >= 0x7f || c == '<' || c == '>' || c == '"' {
				t.Fatalf("escaped %q holds %q, which a URL may not: %q", cid, c, e)
			}
		}
		back, err := unescapeCID(e)
		if err != nil || back != cid {
			t.Fatalf("round trip %q -> %q -> %q, %v", cid, e, back, err)
		}
	})
}
