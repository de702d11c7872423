package xmlscan

import (
	"bytes"
	"testing"
	"time"
)

// The name cache looks names of up to shortName bytes up by their bytes
// as two words under wordHash, a hash keyed per Document. Two things must
// hold whatever a sender puts in a message: a name is only ever found as
// itself (equal hashes, shared prefixes and equal first words decide
// nothing), and probing stays short, which needs keys the sender cannot
// know, and a table that cannot grow without bound.

// TestWordKeysRandomPerDocument: each Document draws its own wordHash
// keys (from its maphash seed), keeps them across Reset, and the
// multiplier is odd.
func TestWordKeysRandomPerDocument(t *testing.T) {
	seen := map[[4]uint64]bool{}
	for range 16 {
		var d Document
		d.Reset()
		k := d.scratch.wordKeys
		if k[3]&1 == 0 {
			t.Fatalf("wordKeys[3] = %#x: even", k[3])
		}
		if seen[k] {
			t.Fatalf("two Documents drew the same keys %x", k)
		}
		seen[k] = true
		if err := Scan([]byte(`<a/>`), &d); err != nil {
			t.Fatal(err)
		}
		if d.scratch.wordKeys != k {
			t.Fatalf("keys changed across Reset: %x, then %x", k, d.scratch.wordKeys)
		}
	}
}

// TestCollidingNamesStayApart puts names that share prefixes, first words
// and lengths (every prefix of a 16-byte name, and each of them with one
// byte changed anywhere, 8- and 16-byte names among them, and 17- and
// 18-byte names that extend them) in one slot of a name table, so that
// every lookup probes past all the others: each must find exactly its own
// entry, and names one byte off from an entry must find none.
func TestCollidingNamesStayApart(t *testing.T) {
	const base = "abcdefghijklmnop"
	var in, out [][]byte
	for n := 1; n <= shortName; n++ {
		in = append(in, []byte(base[:n]))
		for i := 0; i < n; i++ {
			b := []byte(base[:n])
			b[i] = 'Z'
			in = append(in, b)
			b = []byte(base[:n])
			b[i] = 'Y'
			out = append(out, b)
		}
	}
	// Longer names take the string path (find) in the same table: a
	// short name's lookup must not take one for its first sixteen bytes.
	long := [][]byte{[]byte(base + "q"), []byte(base + "qr"), []byte(base + "Z")}
	out = append(out, []byte("Z"+base[:shortName-1]), []byte(base+"Y"))
	tab := internTable{slots: make([]qname, nameSlots)}
	const h = 0x2a5 // one slot for all
	for _, b := range long {
		if _, found := tab.find(b, h); found {
			t.Fatalf("%q found before it was added", b)
		}
		tab.insert(b, h)
	}
	for _, b := range in {
		w0, w1 := wordName(b)
		if q, found := tab.findWords(w0, w1, len(b), h); found {
			t.Fatalf("%q found as %q before it was added", b, q.raw)
		}
		q := tab.insert(b, h)
		q.w0, q.w1 = w0, w1
	}
	for _, b := range in {
		w0, w1 := wordName(b)
		if q, found := tab.findWords(w0, w1, len(b), h); !found || q.raw != string(b) {
			t.Fatalf("%q: found %v as %q", b, found, q.raw)
		}
	}
	for _, b := range long {
		if q, found := tab.find(b, h); !found || q.raw != string(b) {
			t.Fatalf("%q: found %v as %q", b, found, q.raw)
		}
	}
	for _, b := range out {
		if len(b) > shortName {
			if q, found := tab.find(b, h); found {
				t.Fatalf("%q found as %q", b, q.raw)
			}
			continue
		}
		w0, w1 := wordName(b)
		if q, found := tab.findWords(w0, w1, len(b), h); found {
			t.Fatalf("%q found as %q", b, q.raw)
		}
	}
}

// collidingNames returns n valid sixteen-byte names whose wordHash under
// keys falls in slot of the name table: what a sender who knew a
// Document's keys could send to make every lookup probe past every name
// before it.
func collidingNames(keys [4]uint64, slot, n int) [][]byte {
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	s := scratch{wordKeys: keys}
	var out [][]byte
	name := make([]byte, shortName)
	for i := uint64(0); len(out) < n; i++ {
		x := i
		for k := range name {
			name[k] = letters[x%uint64(len(letters))]
			x /= uint64(len(letters))
		}
		w0, w1 := wordName(name)
		if int(s.wordHash(w0, w1))&(nameSlots-1) == slot {
			out = append(out, bytes.Clone(name))
		}
	}
	return out
}

// floodMessage is a root with one empty element per name.
func floodMessage(names [][]byte) []byte {
	var b bytes.Buffer
	b.WriteString("<r>")
	for _, n := range names {
		b.WriteString("<")
		b.Write(n)
		b.WriteString("/>")
	}
	b.WriteString("</r>")
	return b.Bytes()
}

// maxProbe returns the longest distance of a short name in sc's name
// table from the slot its hash puts it in: the most probes a lookup makes.
func maxProbe(sc *scratch) int {
	mask := len(sc.names.slots) - 1
	longest := 0
	for i := range sc.names.slots {
		q := &sc.names.slots[i]
		if q.raw == "" || len(q.raw) > shortName {
			continue
		}
		longest = max(longest, (i-int(sc.wordHash(q.w0, q.w1))&mask)&mask)
	}
	return longest
}

// floodKeys stand for keys a sender has learnt.
var floodKeys = [4]uint64{0x9e3779b97f4a7c15, 0xbf58476d1ce4e5b9, 0x94d049bb133111eb, 0x2545f4914f6cdd1d}

// TestNameFloodNeedsTheKeys: names crafted to share one slot under known
// keys do share it in a Document with those keys (every lookup probes
// past up to all the others: the attack is real once keys leak), the
// table stays bounded (cleared at half full, so no probe passes more than
// nameSlots/2 entries, whatever the number of names), and in Documents
// with their own random keys the same names spread out.
func TestNameFloodNeedsTheKeys(t *testing.T) {
	names := collidingNames(floodKeys, 5, 3*nameSlots)
	few := floodMessage(names[:nameSlots/2-2]) // with r: the table just below half full

	var keyed Document
	keyed.Reset()
	keyed.scratch.wordKeys = floodKeys
	if err := Scan(few, &keyed); err != nil {
		t.Fatal(err)
	}
	if got := maxProbe(&keyed.scratch); got < nameSlots/2-4 {
		t.Fatalf("known keys: longest probe %d, want the crafted names in one run (>= %d)", got, nameSlots/2-4)
	}
	for _, n := range []int{nameSlots/2 - 1, nameSlots / 2, nameSlots/2 + 1, nameSlots * 3 / 4, nameSlots, len(names)} {
		if err := Scan(floodMessage(names[:n]), &keyed); err != nil {
			t.Fatal(err)
		}
		if len(keyed.scratch.names.slots) != nameSlots || keyed.scratch.names.used > nameSlots/2 {
			t.Fatalf("known keys: %d slots, %d used after %d names; want %d slots, at most half used",
				len(keyed.scratch.names.slots), keyed.scratch.names.used, n, nameSlots)
		}
		if got := maxProbe(&keyed.scratch); got > nameSlots/2 {
			t.Fatalf("known keys: longest probe %d after %d names, want at most %d", got, n, nameSlots/2)
		}
	}

	for range 4 {
		var fresh Document
		if err := Scan(few, &fresh); err != nil {
			t.Fatal(err)
		}
		// Linear probing at load one half: runs of more than a few
		// dozen are vanishingly rare for a random hash.
		if got := maxProbe(&fresh.scratch); got > 64 {
			t.Fatalf("random keys: longest probe %d for names crafted against other keys, want <= 64", got)
		}
	}
}

// BenchmarkNameFlood prints what knowing a Document's keys would buy a
// sender: the gate's time on 3,072 distinct sixteen-byte names crafted to
// share one slot, in a Document with those keys (known) and in one with
// random keys (random), measured alternately in one run (known/random).
// The bound is the table's: at most nameSlots/2 probes per name.
func BenchmarkNameFlood(b *testing.B) {
	msg := floodMessage(collidingNames(floodKeys, 5, 3*nameSlots))
	var known, random Document
	known.Reset()
	known.scratch.wordKeys = floodKeys
	var tk, tr time.Duration
	b.ReportAllocs()
	b.SetBytes(int64(2 * len(msg)))
	for b.Loop() {
		t0 := time.Now()
		if err := Scan(msg, &known); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := Scan(msg, &random); err != nil {
			b.Fatal(err)
		}
		tk, tr = tk+t1.Sub(t0), tr+time.Since(t1)
	}
	b.ReportMetric(float64(tk)/float64(tr), "known/random")
	b.ReportMetric(float64(len(msg)), "msg-bytes")
}
