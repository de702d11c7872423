package signer

import (
	"encoding/base64"

	"github.com/wssgw/wssgw/internal/c14n"
)

// buf assembles markup. Every value that reaches it is escaped here, so the
// Security header is well-formed by construction; the xmlscan pass over the
// whole message checks that anyway before anything is digested.
type buf []byte

// open writes "<name" (the caller adds attributes and then end/empty).
func (b *buf) open(name string) { *b = append(append(*b, '<'), name...) }

// attr writes ` name="value"` with value escaped by C14N §2.3's rules for
// attribute values (c14n.AppendAttr), so that attribute-value
// normalization (XML 1.0 §3.3.3) gives back value unchanged.
func (b *buf) attr(name, value string) {
	s := append(append(append(*b, ' '), name...), '=', '"')
	*b = append(c14n.AppendAttr(s, value), '"')
}

// end closes a start tag; empty writes "></name>" instead of "/>" so the
// bytes equal the canonical form (C14N §2.3: empty elements become
// start-end pairs), which keeps the markup identical to what a verifier
// canonicalizes.
func (b *buf) end()              { *b = append(*b, '>') }
func (b *buf) empty(name string) { *b = append(append(append(*b, "></"...), name...), '>') }
func (b *buf) close(name string) { *b = append(append(append(*b, "</"...), name...), '>') }

// text writes character data escaped by C14N §2.3 (c14n.AppendText).
func (b *buf) text(v string) { *b = c14n.AppendText(*b, v) }

// elem writes <name>text</name>.
func (b *buf) elem(name, text string) {
	b.open(name)
	b.end()
	b.text(text)
	b.close(name)
}

// b64 writes <name>base64(v)</name>; base64 needs no escaping. No line
// breaks: BSP 1.1 and XMLDSig allow them, but some stacks mishandle them.
func (b *buf) b64(name string, v []byte) {
	b.open(name)
	b.end()
	b.b64raw(v)
	b.close(name)
}

// b64raw writes base64(v) as character data.
func (b *buf) b64raw(v []byte) {
	n := len(*b)
	*b = append(*b, make([]byte, base64.StdEncoding.EncodedLen(len(v)))...)
	base64.StdEncoding.Encode((*b)[n:], v)
}

// algo writes <name Algorithm="uri"></name>.
func (b *buf) algo(name, uri string) {
	b.open(name)
	b.attr("Algorithm", uri)
	b.empty(name)
}
