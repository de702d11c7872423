package template

import (
	"bytes"
	"compress/flate"
	"io"
)

// A template keeps the slot values of the message it was learned from,
// for export (import learns that message again through the DOM engine).
// They are read only by export, so they are kept deflated against a
// dictionary of the store: a partner's templates repeat its certificate
// and much of their payload, and the values shrink to what is new in them.

// pack deflates t's exemplar values against the store's dictionary, which
// the first template's values start. A template whose values owe the
// dictionary little becomes the new dictionary: its partner is likely to
// send more.
func (s *Store) pack(t *Template) {
	raw := t.exemplarValues
	if t.exDict != nil || len(raw) == 0 {
		return
	}
	if s.dict == nil {
		s.dict = raw
	}
	var b bytes.Buffer
	w, err := flate.NewWriterDict(&b, flate.DefaultCompression, s.dict)
	if err != nil {
		return
	}
	if _, err := w.Write(raw); err != nil || w.Close() != nil || b.Len() >= len(raw) {
		return
	}
	t.exemplarValues, t.exDict = bytes.Clone(b.Bytes()), s.dict
	if b.Len() > len(raw)/2 {
		s.dict = raw
	}
	t.size += len(t.exemplarValues) - len(raw)
}

// values returns t's exemplar values, inflated.
func (t *Template) values() ([]byte, error) {
	if t.exDict == nil {
		return t.exemplarValues, nil
	}
	return io.ReadAll(flate.NewReaderDict(bytes.NewReader(t.exemplarValues), t.exDict))
}
