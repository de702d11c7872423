package xmlscan

import (
	"encoding/binary"
	"hash/maphash"
	"math/bits"
)

// scratch is per-Document working state that survives Reset, so that a
// reused Document scans without allocating.
type scratch struct {
	seed   maphash.Seed
	seeded bool
	// wordKeys key wordHash; drawn from seed.
	wordKeys [4]uint64
	// names caches validated QNames with their split parts, uris
	// namespace names. Messages of one partner repeat the same names, so
	// after the first message every lookup hits: no string is allocated
	// and no name is validated twice. Entries are copies, never views of
	// the input; only short strings are cached, and a table that fills up
	// is cleared, so the caches stay bounded whatever the input.
	names internTable
	uris  internTable
	long  qname // a name too long to cache

	bindings []nsBinding
	prefixes []prefixSlot // open addressing; len is a power of two
	nPrefix  int          // used slots in prefixes
	frames   []frame
	dups     []int32  // open-addressing table for duplicate attribute checks
	attrPH   []uint64 // prefix hashes of the current tag's attributes
	buf      []byte   // normalization buffer for namespace URIs
}

// qname is a validated QName split into prefix and local part.
type qname struct {
	raw    string
	prefix string
	local  string
	ph     uint64 // hash of prefix, for the prefix table
	// w0, w1 are raw's bytes, zero-padded, when it has at most
	// shortName bytes (wordName); zero otherwise.
	w0, w1 uint64
}

const (
	nameSlots    = 1024 // holds 512 names before it is cleared
	uriSlots     = 128
	maxInternLen = 128
	// shortName is the longest name looked up by its bytes as two words
	// (wordName) rather than through maphash and a string comparison:
	// most element and attribute names (issue 14: interning was about a
	// tenth of the gate's instructions on fresh messages).
	shortName = 16
)

func (s *scratch) init() {
	if !s.seeded {
		s.seed = maphash.MakeSeed()
		s.seeded = true
		for i := range s.wordKeys {
			s.wordKeys[i] = maphash.Comparable(s.seed, i)
		}
		s.wordKeys[3] |= 1
		s.names.slots = make([]qname, nameSlots)
		s.uris.slots = make([]qname, uriSlots)
	}
}

func (s *scratch) reset() {
	s.init()
	s.bindings = truncate(s.bindings)
	s.frames = truncate(s.frames)
	s.dups = truncate(s.dups)
	s.attrPH = truncate(s.attrPH)
	if len(s.prefixes) > 256 || len(s.prefixes) == 0 {
		s.prefixes = make([]prefixSlot, 16)
	} else {
		clear(s.prefixes)
	}
	s.nPrefix = 0
	if cap(s.buf) > retainMax {
		s.buf = nil
	}
	// xml is bound by definition (Namespaces in XML 1.0 §3).
	s.push("xml", s.hashString("xml"), NamespaceXML, 0)
}

// qname returns the validated, split QName b, or nil if b is not a QName;
// high says whether b has non-ASCII bytes. The result points into the
// cache and is only valid until the next call.
func (s *scratch) qname(b []byte, high bool) *qname {
	var (
		h, w0, w1 uint64
		q         *qname
		found     bool
	)
	if len(b) <= shortName {
		w0, w1 = wordName(b)
		h = s.wordHash(w0, w1)
		q, found = s.names.findWords(w0, w1, len(b), h)
	} else {
		h = maphash.Bytes(s.seed, b)
		q, found = s.names.find(b, h)
	}
	if found {
		return q
	}
	colon, ok := checkQName(b, high)
	if !ok {
		return nil
	}
	if len(b) <= maxInternLen {
		q = s.names.insert(b, h)
		q.w0, q.w1 = w0, w1
	} else {
		q = &s.long
		q.raw = string(b)
	}
	q.prefix, q.local = "", q.raw
	if colon > 0 {
		q.prefix, q.local = q.raw[:colon], q.raw[colon+1:]
	}
	q.ph = s.hashString(q.prefix)
	return q
}

// uri interns a namespace name.
func (s *scratch) uri(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > maxInternLen {
		return string(b)
	}
	h := maphash.Bytes(s.seed, b)
	if q, found := s.uris.find(b, h); found {
		return q.raw
	}
	return s.uris.insert(b, h).raw
}

func (s *scratch) hashString(v string) uint64 { return maphash.String(s.seed, v) }

// wordName returns the bytes of b (at most shortName of them) as two
// little-endian words, zero past len(b). It reads b's capacity past its
// length when there is room for sixteen bytes and masks those bytes off:
// callers cap b at the end of the input (state.qname).
func wordName(b []byte) (w0, w1 uint64) {
	n := len(b)
	if cap(b) >= 16 {
		x := b[:16]
		w0, w1 = binary.LittleEndian.Uint64(x), binary.LittleEndian.Uint64(x[8:])
	} else {
		var x [16]byte
		copy(x[:], b)
		w0, w1 = binary.LittleEndian.Uint64(x[:]), binary.LittleEndian.Uint64(x[8:])
	}
	m := &wordMasks[n&31]
	return w0 & m[0], w1 & m[1]
}

// wordMasks[n] keeps the first n bytes of two little-endian words.
var wordMasks = func() (t [32][2]uint64) {
	for n := 0; n <= shortName; n++ {
		for i := 0; i < n; i++ {
			t[n][i/8] |= 0xff << (8 * (i % 8))
		}
	}
	return t
}()

// wordHash hashes a short name's words under the Document's random keys
// (wyhash's folded 128-bit products, the construction of the Go runtime's
// own map hash on CPUs without AES): a sender cannot choose names that
// share a slot without knowing the keys, so probing stays short whatever
// the input.
func (s *scratch) wordHash(w0, w1 uint64) uint64 {
	hi, lo := bits.Mul64(w0^s.wordKeys[0], w1^s.wordKeys[1])
	hi, lo = bits.Mul64(hi^lo^s.wordKeys[2], s.wordKeys[3])
	return hi ^ lo
}

// internTable is an open-addressing set of strings keyed by a seeded hash,
// kept at most half full. Collisions only cost probes, never evictions, so
// a steady stream of messages hits every time.
type internTable struct {
	slots []qname // len is a power of two; raw == "" marks a free slot
	used  int
}

// find returns the entry for b, or the free slot where it belongs.
func (t *internTable) find(b []byte, h uint64) (*qname, bool) {
	mask := len(t.slots) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		q := &t.slots[i]
		if q.raw == "" {
			return q, false
		}
		if q.raw == string(b) {
			return q, true
		}
	}
}

// findWords is find for a name of n <= shortName bytes given as
// wordName's words: equal words and length are equal bytes.
func (t *internTable) findWords(w0, w1 uint64, n int, h uint64) (*qname, bool) {
	mask := len(t.slots) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		q := &t.slots[i]
		if q.w0 == w0 && q.w1 == w1 && len(q.raw) == n {
			return q, true
		}
		if q.raw == "" {
			return q, false
		}
	}
}

// insert adds b (not present, not empty) and returns its entry. A table
// that would become more than half full is cleared first: an input with
// many distinct names costs allocations, not memory.
func (t *internTable) insert(b []byte, h uint64) *qname {
	if 2*(t.used+1) > len(t.slots) {
		clear(t.slots)
		t.used = 0
	}
	q, _ := t.find(b, h)
	*q = qname{raw: string(b)}
	t.used++
	return q
}
