package xmlscan

import (
	"bytes"
	"testing"
)

// TestNameRunTables derives the nibble tables of name_amd64.s from
// nameTab: a byte continues a name iff its low nibble's and its high
// nibble's class bits meet.
func TestNameRunTables(t *testing.T) {
	lo := [16]uint8{0x12, 0x16, 0x16, 0x16, 0x16, 0x16, 0x16, 0x16, 0x16, 0x16, 0x16, 0x14, 0x14, 0x15, 0x15, 0x1c}
	hi := [16]uint8{0, 0, 0x01, 0x02, 0x04, 0x0a, 0x04, 0x02, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10}
	for c := 0; c < 256; c++ {
		got := lo[c&15]&hi[c>>4] != 0
		if want := nameTab[c]&nameCont != 0; got != want {
			t.Errorf("byte %#02x: tables say name byte %v, nameTab %v", c, got, want)
		}
	}
}

// TestNameRunEveryOffset puts every byte value at every offset of names
// of every length up to 40, with every amount of input after them, and
// checks scanName against scanNameGeneric: the sixteen-byte steps must
// stop exactly where the byte loop does and see a non-ASCII byte wherever
// it falls (issue 14).
func TestNameRunEveryOffset(t *testing.T) {
	for c := 0; c < 256; c++ {
		for n := 0; n <= 40; n++ {
			for k := 0; k <= n; k++ {
				for _, fill := range []byte{'a', 0xc3} {
					v := append(append(bytes.Repeat([]byte{'a'}, k), byte(c)), bytes.Repeat([]byte{fill}, n-k)...)
					for p := 0; p <= len(v); p += max(1, len(v)/3) {
						gotEnd, gotHigh := scanName(v, p)
						wantEnd, wantHigh := scanNameGeneric(v, p)
						if gotEnd != wantEnd || gotHigh != wantHigh {
							t.Fatalf("scanName(%q, %d) = %d, %v; byte by byte %d, %v", v, p, gotEnd, gotHigh, wantEnd, wantHigh)
						}
					}
				}
			}
		}
	}
}

// FuzzScanName holds scanName to scanNameGeneric at every offset of any
// input.
func FuzzScanName(f *testing.F) {
	f.Add([]byte(`<soap:Envelope xmlns:soap="urn:x"><wsse:BinarySecurityToken wsu:Id="x"/>`))
	f.Add([]byte("p2a993726:Envelope\xc3\xa9t\xe2\x80\x8bzzzzzzzzzzzzzzzzzzzzzzz>"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for p := 0; p <= len(data); p++ {
			gotEnd, gotHigh := scanName(data, p)
			wantEnd, wantHigh := scanNameGeneric(data, p)
			if gotEnd != wantEnd || gotHigh != wantHigh {
				t.Fatalf("scanName(%q, %d) = %d, %v; byte by byte %d, %v", data, p, gotEnd, gotHigh, wantEnd, wantHigh)
			}
		}
	})
}

// TestWordNameLookup looks up every short name length, each embedded in
// inputs with different bytes after it (past the slice's length, inside
// or outside its capacity) and against the same name changed in one
// byte: the word path must find exactly the entry of the name's own
// bytes (issue 14).
func TestWordNameLookup(t *testing.T) {
	var d Document
	d.Reset()
	sc := &d.scratch
	for n := 1; n <= shortName+2; n++ {
		name := []byte("abcdefghijklmnopqrstuvwxyz"[:n])
		var first *qname
		for _, tail := range []string{"", ">", " x=\"1\">", "zzzzzzzzzzzzzzzzzzzz", "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"} {
			buf := append(append([]byte(nil), name...), tail...)
			q := sc.qname(buf[:n:len(buf)], false)
			if q == nil || q.raw != string(name) {
				t.Fatalf("qname(%q with %q after it) = %+v", name, tail, q)
			}
			if first == nil {
				first = q
			} else if q != first {
				t.Fatalf("qname(%q with %q after it): a second entry", name, tail)
			}
			if n > shortName {
				continue
			}
			if w0, w1 := wordName(buf[:n:n]); q.w0 != w0 || q.w1 != w1 {
				t.Fatalf("qname(%q): words %x %x, want %x %x", name, q.w0, q.w1, w0, w1)
			}
		}
		for i := 0; i < n; i++ {
			other := append([]byte(nil), name...)
			other[i] = 'Z'
			q := sc.qname(other, false)
			if q == nil || q.raw != string(other) || q == first {
				t.Fatalf("qname(%q) after %q = %+v", other, name, q)
			}
			if n > shortName {
				continue
			}
			// Probing from the original's own slot must pass its
			// entry by: the words, not the hash, decide.
			w0, w1 := wordName(name)
			o0, o1 := wordName(other)
			if q, found := sc.names.findWords(o0, o1, n, sc.wordHash(w0, w1)); found && q.raw != string(other) {
				t.Fatalf("findWords(%q) from the slot of %q found %q", other, name, q.raw)
			}
		}
	}
}

// TestEndTagEveryByte closes elements of every name length up to 20 with
// end tags that differ from the start tag in one byte, go on one byte
// further, or stop one byte short, with and without sixteen bytes of
// input left after them: only the exact name may close the element,
// whether endTag compares two words or the bytes (issue 14).
func TestEndTagEveryByte(t *testing.T) {
	const letters = "abcdefghijklmnopqrstuvwxyz"
	for n := 1; n <= 20; n++ {
		name := letters[:n]
		if n > 2 {
			name = name[:1] + ":" + name[2:] // a prefix too
		}
		var ends []string
		for i := 0; i < n; i++ {
			if name[i] != ':' {
				ends = append(ends, name[:i]+"Z"+name[i+1:])
			}
		}
		ends = append(ends, name+"z", name[:n-1], name)
		for _, end := range ends {
			for _, tail := range []string{"", "<!-- sixteen bytes and more -->"} {
				doc := `<r xmlns:a="urn:a"><` + name + `></` + end + `>` + tail + `</r>`
				var d Document
				err := Scan([]byte(doc), &d)
				if end == name && err != nil {
					t.Fatalf("Scan(%q) = %v", doc, err)
				}
				if end != name && kindOf(err) != KindTagMismatch {
					t.Fatalf("Scan(%q) = %v, want %v", doc, err, KindTagMismatch)
				}
			}
		}
	}
}
