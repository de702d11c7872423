package c14n

import (
	"errors"
	"io"
	"sync"

	"github.com/wssgw/wssgw/internal/xmlscan"
)

// Algorithm identifiers.
const (
	AlgC14N10              = "http://www.w3.org/TR/2001/REC-xml-c14n-20010315"
	AlgC14N10WithComments  = "http://www.w3.org/TR/2001/REC-xml-c14n-20010315#WithComments"
	AlgC14N11              = "http://www.w3.org/2006/12/xml-c14n11"
	AlgC14N11WithComments  = "http://www.w3.org/2006/12/xml-c14n11#WithComments"
	AlgExcC14N             = "http://www.w3.org/2001/10/xml-exc-c14n#"
	AlgExcC14NWithComments = "http://www.w3.org/2001/10/xml-exc-c14n#WithComments"
)

// MaxPrefixes bounds the InclusiveNamespaces PrefixList (security.md B8:
// the PrefixList is attacker-controlled input whose cost is per element).
const MaxPrefixes = 32

var (
	// ErrUnsupported: the algorithm is not one of the six above, or the
	// input needs a feature not implemented (C14N 1.1 xml:base fix-up).
	ErrUnsupported = errors.New("c14n: unsupported algorithm or input")
	// ErrRelativeNamespace: a namespace URI in the subtree (or rendered on
	// its apex) is relative, which C14N 1.0 §2 makes an error.
	ErrRelativeNamespace = errors.New("c14n: relative namespace URI")
	// ErrPrefixList: the InclusiveNamespaces PrefixList is malformed, too
	// long, or given for an algorithm that has none.
	ErrPrefixList = errors.New("c14n: bad InclusiveNamespaces PrefixList")
	// ErrElement: the element index is out of range.
	ErrElement = errors.New("c14n: element index out of range")
)

// mode selects the algorithm family.
type mode uint8

const (
	modeExc mode = iota
	modeC14N10
	modeC14N11
)

// Exclusive appends to dst the Exclusive XML Canonicalization 1.0 of the
// subtree of element elem. prefixList is the InclusiveNamespaces PrefixList,
// one prefix per entry, "#default" for the default namespace (see
// ParsePrefixList).
func Exclusive(d *xmlscan.Document, elem int, prefixList []string, withComments bool, dst []byte) ([]byte, error) {
	return run(nil, d, elem, modeExc, prefixList, withComments, dst)
}

// ExclusiveTo is Exclusive writing to w through an internal buffer, so
// that w (typically a hash.Hash) sees few, large writes.
func ExclusiveTo(w io.Writer, d *xmlscan.Document, elem int, prefixList []string, withComments bool) error {
	_, err := run(w, d, elem, modeExc, prefixList, withComments, nil)
	return err
}

// algMode maps an algorithm URI to its mode.
func algMode(alg string) (m mode, comments bool, err error) {
	switch alg {
	case AlgExcC14N:
		return modeExc, false, nil
	case AlgExcC14NWithComments:
		return modeExc, true, nil
	case AlgC14N10:
		return modeC14N10, false, nil
	case AlgC14N10WithComments:
		return modeC14N10, true, nil
	case AlgC14N11:
		return modeC14N11, false, nil
	case AlgC14N11WithComments:
		return modeC14N11, true, nil
	}
	return 0, false, ErrUnsupported
}

// Canonicalize appends to dst the canonical form of the subtree of element
// elem under the algorithm alg. prefixList must be empty unless alg is
// exclusive. Any other algorithm (XPath, XSLT, ...) gives ErrUnsupported.
func Canonicalize(alg string, d *xmlscan.Document, elem int, prefixList []string, dst []byte) ([]byte, error) {
	m, comments, err := algMode(alg)
	if err != nil {
		return dst, err
	}
	return run(nil, d, elem, m, prefixList, comments, dst)
}

// CanonicalizeTo is Canonicalize writing to w.
func CanonicalizeTo(w io.Writer, alg string, d *xmlscan.Document, elem int, prefixList []string) error {
	m, comments, err := algMode(alg)
	if err != nil {
		return err
	}
	_, err = run(w, d, elem, m, prefixList, comments, nil)
	return err
}

var pool = sync.Pool{New: func() any { return new(state) }}

// run canonicalizes with a pooled state.
func run(w io.Writer, d *xmlscan.Document, elem int, m mode, prefixList []string, comments bool, dst []byte) ([]byte, error) {
	if d == nil || elem < 0 || elem >= len(d.Elements) {
		return dst, ErrElement
	}
	if m != modeExc && len(prefixList) > 0 {
		return dst, ErrPrefixList
	}
	s := pool.Get().(*state)
	defer s.release()
	if err := s.init(w, d, m, prefixList, comments, dst); err != nil {
		return dst, err
	}
	if err := s.subtree(elem); err != nil {
		return dst, err
	}
	if w != nil {
		return nil, s.flush()
	}
	return s.buf, nil
}
