package signer

import (
	"encoding/xml"
	"fmt"
	"sync"

	"github.com/wssgw/wssgw/internal/xmlscan"
)

// envelope is the analysed input: the scanned document and the indices of
// the elements Secure edits.
type envelope struct {
	d      *xmlscan.Document
	soapNS string
	soap12 bool
	header int   // -1 when the envelope has no Header
	body   int   // the Body element
	signed []int // header blocks named in Options.SignHeaders, in document order
}

// parseEnvelope gates the input and locates Header and Body. SOAP 1.1 §4.1
// and SOAP 1.2 Part 1 §5 both put the optional Header first and the Body
// next, so anything else is rejected rather than guessed at.
// The caller returns e.d to the pool with putDoc when done, also on error.
func parseEnvelope(gate *xmlscan.Scanner, data []byte, signHeaders []xml.Name) (_ *envelope, err error) {
	e := &envelope{d: getDoc(), header: -1}
	defer func() {
		if err != nil {
			putDoc(e.d)
		}
	}()
	if err := gate.Scan(data, e.d); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrEnvelope, err)
	}
	d := e.d
	root := d.Root()
	if root.Local != "Envelope" || (root.Space != nsSOAP11 && root.Space != nsSOAP12) {
		return nil, fmt.Errorf("%w: root is not a SOAP 1.1 or 1.2 Envelope", ErrEnvelope)
	}
	e.soapNS, e.soap12 = root.Space, root.Space == nsSOAP12
	c := d.FirstChild(0)
	if c >= 0 && d.Elements[c].Space == e.soapNS && d.Elements[c].Local == "Header" {
		e.header = c
		c = d.NextSibling(c)
	}
	if c < 0 || d.Elements[c].Space != e.soapNS || d.Elements[c].Local != "Body" {
		return nil, fmt.Errorf("%w: no Body after the optional Header", ErrEnvelope)
	}
	e.body = c
	// SOAP 1.2 Part 1 §5: the Body is the last child. SOAP 1.1 §4 allows
	// trailing elements, but a second Header or Body after the Body would
	// be read differently by different receivers.
	for n := d.NextSibling(c); n >= 0; n = d.NextSibling(n) {
		if e.soap12 || d.Elements[n].Space == e.soapNS {
			return nil, fmt.Errorf("%w: element after the Body", ErrEnvelope)
		}
	}
	if e.header < 0 {
		return e, nil
	}
	for h := d.FirstChild(e.header); h >= 0; h = d.NextSibling(h) {
		el := &d.Elements[h]
		if el.Space == nsWSSE && el.Local == "Security" {
			return nil, ErrSecured
		}
		for _, n := range signHeaders {
			if el.Space == n.Space && el.Local == n.Local {
				e.signed = append(e.signed, h)
				break
			}
		}
	}
	return e, nil
}

// docs pools scanned documents: a Document keeps its slices across scans
// (xmlscan's steady state allocates nothing), and Secure scans three times.
var docs = sync.Pool{New: func() any { return new(xmlscan.Document) }}

func getDoc() *xmlscan.Document { return docs.Get().(*xmlscan.Document) }

func putDoc(d *xmlscan.Document) {
	d.Reset()
	docs.Put(d)
}

// wsuID returns the element's existing wsu:Id value, or "".
func wsuID(d *xmlscan.Document, i int) string {
	if j := d.FindAttr(i, nsWSU, "Id"); j >= 0 {
		return string(d.AttrValue(j, nil))
	}
	return ""
}

// qname returns the element's qualified name as written.
func qname(d *xmlscan.Document, i int) []byte {
	el := &d.Elements[i]
	return d.Data[el.Start+1 : el.Start+1+el.QNameLen()]
}

// tagClose returns the offset of the '>' or "/>" that closes element i's
// start tag.
func tagClose(d *xmlscan.Document, i int) int {
	el := &d.Elements[i]
	if el.Flags&xmlscan.FlagEmpty != 0 {
		return el.StartEnd - 2
	}
	return el.StartEnd - 1
}
