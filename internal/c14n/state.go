package c14n

import (
	"io"
	"strings"

	"github.com/wssgw/wssgw/internal/xmlscan"
)

// flushAt is the size at which a streaming canonicalization hands its
// buffer to the writer; chunks of at least directAt bytes bypass the buffer.
const (
	flushAt  = 8 << 10
	directAt = 2 << 10
	// keepMax bounds the buffers a pooled state retains.
	keepMax = 64 << 10
)

// binding is one namespace node rendered on an output element (exc-c14n §3,
// C14N 1.0 §2.3: "in effect in the output ancestor").
type binding struct {
	prefix, uri string
}

// state is one canonicalization in progress.
type state struct {
	d        *xmlscan.Document
	m        mode
	comments bool
	prefixes []string // PrefixList, "#default" mapped to ""

	w   io.Writer // nil: append to buf and return it
	buf []byte
	own []byte // the streaming buffer, kept across uses
	err error  // first write error

	rendered []binding // namespace nodes rendered by open output elements
	marks    []int     // len(rendered) at each open element's start
	cand     []binding // candidate namespace nodes of the current element
	attrs    []int     // attribute indices of the current element, sorted
	scratch  []byte    // normalization buffer

	replace Replacer // nil except for CanonicalizeToReplacing
	// noVerbatim turns off copying start tags as written (verbatim), so
	// that tests can compare both paths.
	noVerbatim bool
}

// ParsePrefixList splits the value of an InclusiveNamespaces PrefixList
// attribute (exc-c14n §3: a white-space separated list of prefixes,
// "#default" for the default namespace).
func ParsePrefixList(v string) ([]string, error) {
	out := strings.FieldsFunc(v, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '\r'
	})
	if len(out) > MaxPrefixes {
		return nil, ErrPrefixList
	}
	for _, p := range out {
		if !validPrefix(p) {
			return nil, ErrPrefixList
		}
	}
	return out, nil
}

// validPrefix accepts "#default" and NCName-like tokens (no colon, no white
// space); an unknown prefix simply matches no namespace node.
func validPrefix(p string) bool {
	if p == "#default" {
		return true
	}
	return p != "" && !strings.ContainsAny(p, ": \t\n\r#")
}

func (s *state) init(w io.Writer, d *xmlscan.Document, m mode, prefixList []string, comments bool, dst []byte) error {
	if len(prefixList) > MaxPrefixes {
		return ErrPrefixList
	}
	s.d, s.m, s.comments, s.w, s.err = d, m, comments, w, nil
	s.prefixes = s.prefixes[:0]
	for _, p := range prefixList {
		if !validPrefix(p) {
			return ErrPrefixList
		}
		if p == "#default" {
			p = ""
		}
		s.prefixes = append(s.prefixes, p)
	}
	if w != nil {
		if s.own == nil {
			s.own = make([]byte, 0, flushAt+directAt)
		}
		s.buf = s.own[:0]
	} else {
		s.buf = dst
	}
	s.rendered, s.marks = s.rendered[:0], s.marks[:0]
	return nil
}

// release returns s to the pool, dropping references to caller data.
func (s *state) release() {
	s.d, s.w, s.buf, s.replace = nil, nil, nil, nil
	if cap(s.scratch) > keepMax {
		s.scratch = nil
	}
	clear(s.rendered[:cap(s.rendered)])
	clear(s.cand[:cap(s.cand)])
	pool.Put(s)
}

// inList reports whether prefix is in the InclusiveNamespaces PrefixList.
func (s *state) inList(prefix string) bool {
	for _, p := range s.prefixes {
		if p == prefix {
			return true
		}
	}
	return false
}

// flush writes the buffer to the writer.
func (s *state) flush() error {
	if s.err == nil && len(s.buf) > 0 {
		_, s.err = s.w.Write(s.buf)
	}
	s.buf = s.buf[:0]
	return s.err
}

// maybeFlush flushes a streaming buffer that is full enough.
func (s *state) maybeFlush() {
	if s.w != nil && len(s.buf) >= flushAt {
		s.flush()
	}
}

// raw emits bytes that need no escaping.
func (s *state) raw(b []byte) {
	if s.w != nil && len(b) >= directAt {
		s.flush()
		if s.err == nil {
			_, s.err = s.w.Write(b)
		}
		return
	}
	s.buf = append(s.buf, b...)
	s.maybeFlush()
}

func (s *state) str(v string) { s.buf = append(s.buf, v...) }
