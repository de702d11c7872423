package c14n

import (
	"io"

	"github.com/wssgw/wssgw/internal/xmlscan"
)

// Replacer says, for a descendant element of the canonicalized subtree,
// whether its canonical form is replaced: ok reports a claim, and write
// then writes the replacement to the writer given to
// CanonicalizeToReplacing in place of the element's whole canonical form
// (start tag, content, end tag). The apex itself is never offered.
//
// It exists for the XOP infoset (W3C XOP 1.0 §3.2, "Infoset
// reconstruction"): an xop:Include element stands for the base64 text of
// a MIME part, which a digest must see streamed from the part, never
// materialized in the document.
type Replacer func(elem int) (write func(io.Writer) error, ok bool)

// CanonicalizeToReplacing is CanonicalizeTo with the descendants that
// replace claims written by the Replacer instead of canonicalized. The
// output before each replacement is flushed to w first, so w sees the
// bytes in document order. A replacement must be character data that
// needs no escaping (base64 text does not), as C14N would emit it.
func CanonicalizeToReplacing(w io.Writer, alg string, d *xmlscan.Document, elem int, prefixList []string, replace Replacer) error {
	m, comments, err := algMode(alg)
	if err != nil {
		return err
	}
	if w == nil || d == nil || elem < 0 || elem >= len(d.Elements) {
		return ErrElement
	}
	if m != modeExc && len(prefixList) > 0 {
		return ErrPrefixList
	}
	s := pool.Get().(*state)
	defer s.release()
	if err := s.init(w, d, m, prefixList, comments, nil); err != nil {
		return err
	}
	s.replace = replace
	if err := s.subtree(elem); err != nil {
		return err
	}
	return s.flush()
}

// replaced writes the replacement of element i when the Replacer claims
// it, and reports whether it did.
func (s *state) replaced(i int) (bool, error) {
	write, ok := s.replace(i)
	if !ok {
		return false, nil
	}
	if err := s.flush(); err != nil {
		return true, err
	}
	if err := write(s.w); err != nil {
		s.err = err
		return true, err
	}
	return true, nil
}
