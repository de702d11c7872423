package dom

import (
	"bytes"
	"unsafe"

	"github.com/wssgw/wssgw/internal/xmlscan"
)

// Sizes of the gate's per-node records.
const (
	elementSize = int64(unsafe.Sizeof(xmlscan.Element{}))
	attrSize    = int64(unsafe.Sizeof(xmlscan.Attr{}))
	// minAttrBytes is the fewest bytes an attribute takes: ` a=""`.
	minAttrBytes = 5
)

// scratchBytes estimates, without parsing, the bytes the gate's arrays take for
// data: one Element per start tag ('<' not followed by '/'; comments and
// CDATA counted too) and at most one Attr per '=' and per two quotes
// (namespace declarations and those in text counted too), and per
// minAttrBytes. It is
// an upper bound of the live arrays, so that what a message costs beyond
// its body is reserved before it is spent: an Element is about 150 bytes
// and an Attr about 90, so a markup-dense message of a few MiB takes ten
// times its size (issue 16). An encrypted message also needs room for the
// copy each decryption makes. A few passes of bytes.Count cost well under a
// millisecond per MiB.
func scratchBytes(data []byte) int64 {
	tags := int64(bytes.Count(data, []byte{'<'}) - bytes.Count(data, []byte("</")))
	// An attribute needs a '=' and two quotes: the fewer bounds it, so
	// that text full of one of them (a=b lists, prose) is not taken for
	// attributes.
	quotes := bytes.Count(data, []byte{'"'}) + bytes.Count(data, []byte{'\''})
	attrs := min(int64(bytes.Count(data, []byte{'='})), int64(quotes/2), int64(len(data)/minAttrBytes))
	n := tags*elementSize + attrs*attrSize
	if bytes.Contains(data, []byte("EncryptedData")) {
		// Each decryption splices the plaintext into a new copy of the
		// message (splice): the old and the new one are live together.
		n += int64(len(data))
	}
	return n
}
