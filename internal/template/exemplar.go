package template

import (
	"bytes"
	"compress/flate"
	"io"
	"weak"
)

// A template keeps the slot values of the message it was learned from,
// for export (import learns that message again through the DOM engine).
// They are read only by export, so they are kept deflated against a
// dictionary of the store: a partner's templates repeat its certificate
// and much of their payload, and the values shrink to what is new in them.

// pack deflates t's exemplar values against the store's dictionary, which
// the first template's values start. A template whose values owe the
// dictionary little becomes the new dictionary: its partner is likely to
// send more. s.mu is held.
func (s *Store) pack(t *Template) {
	raw := t.exemplarValues
	if t.exDict != nil || len(raw) == 0 {
		return
	}
	if s.dict == nil {
		s.dict = raw
	}
	out, ok := s.packer.deflate(raw, s.dict)
	if !ok {
		return
	}
	t.exemplarValues, t.exDict = out, s.dict
	if len(out) > len(raw)/2 {
		s.dict = raw
	}
	t.size += len(t.exemplarValues) - len(raw)
}

// packer is a store's deflater, kept with the dictionary it was made for.
// A flate.Writer is about 800 KB of tables: making one per learned
// template was a third of learning's CPU and two thirds of what it
// allocated (issue 14: every shape learned at its second sighting, a new
// partner's or a fresh-shape sender's). Reset reuses the tables, and its
// output is that of a new writer with the same dictionary. The store
// reuses one writer while its dictionary stays, and makes a new one when
// the dictionary moves on. It holds the writer weakly: learning comes in
// bursts (a new partner, a release), and 800 KB kept for good by every
// policy's store would be memory bounded by the number of routes, not
// by config; the garbage collector takes it back between bursts.
type packer struct {
	w    weak.Pointer[flate.Writer]
	dict []byte // the dictionary w was made with (the store's, same slice)
	buf  bytes.Buffer
}

// packerMaxBuf bounds the output buffer kept between templates: a large
// message's exemplar is deflated into a buffer of its own size, which is
// not kept for the next one.
const packerMaxBuf = 64 << 10

// deflate returns raw deflated against dict, in a slice of its own, and
// false when that does not make it smaller.
func (p *packer) deflate(raw, dict []byte) ([]byte, bool) {
	p.buf.Reset()
	w := p.w.Value()
	if w == nil || !sameSlice(p.dict, dict) {
		var err error
		if w, err = flate.NewWriterDict(&p.buf, flate.DefaultCompression, dict); err != nil {
			p.w, p.dict = weak.Pointer[flate.Writer]{}, nil
			return nil, false
		}
		p.w, p.dict = weak.Make(w), dict
	} else {
		w.Reset(&p.buf)
	}
	defer func() {
		if p.buf.Cap() > packerMaxBuf {
			p.buf = bytes.Buffer{}
		}
	}()
	if _, err := w.Write(raw); err != nil || w.Close() != nil || p.buf.Len() >= len(raw) {
		return nil, false
	}
	return bytes.Clone(p.buf.Bytes()), true
}

// sameSlice reports whether a and b are the same bytes in memory, not
// only equal ones: the store's dictionary is replaced, never changed in
// place.
func sameSlice(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// values returns t's exemplar values, inflated.
func (t *Template) values() ([]byte, error) {
	if t.exDict == nil {
		return t.exemplarValues, nil
	}
	return io.ReadAll(flate.NewReaderDict(bytes.NewReader(t.exemplarValues), t.exDict))
}
