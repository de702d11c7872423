package demo

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"

	"github.com/wssgw/wssgw/internal/soap"
)

// NS is the namespace of the demo service's messages.
const NS = "urn:wssgw:demo:orders"

// Backend is the demo order service. It answers an operation <Op> in the
// Body with <OpResponse> carrying an order id and what it received.
type Backend struct {
	orders atomic.Int64
}

// ServeHTTP answers one SOAP request.
func (b *Backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	kind, v := soap.Classify(r.Header.Get("Content-Type"))
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil || kind != soap.Envelope {
		writeFault(w, v, "demo backend accepts plain SOAP envelopes only")
		return
	}
	op, err := operation(body)
	if err != nil {
		writeFault(w, v, "demo backend could not read the envelope: "+err.Error())
		return
	}
	id := b.orders.Add(1)
	w.Header().Set("Content-Type", v.ContentType())
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>
<s:Envelope xmlns:s="%s"><s:Body><o:%sResponse xmlns:o="%s"><o:status>accepted</o:status><o:orderId>ORD-%06d</o:orderId><o:receivedBytes>%d</o:receivedBytes></o:%sResponse></s:Body></s:Envelope>
`, envNS(v), op, NS, id, len(body), op)
}

// operation is the local name of the first element in the SOAP Body.
func operation(body []byte) (string, error) {
	d := xml.NewDecoder(bytes.NewReader(body))
	inBody := false
	for {
		tok, err := d.Token()
		if err != nil {
			return "", errors.New("no operation element in the Body")
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if inBody {
			return se.Name.Local, nil
		}
		inBody = se.Name.Local == "Body" && (se.Name.Space == soap.NS11 || se.Name.Space == soap.NS12)
	}
}

func envNS(v soap.Version) string {
	if v == soap.V12 {
		return soap.NS12
	}
	return soap.NS11
}

func writeFault(w http.ResponseWriter, v soap.Version, reason string) {
	w.Header().Set("Content-Type", v.ContentType())
	w.WriteHeader(http.StatusInternalServerError)
	_ = soap.Fault{Code: soap.Sender, Reason: reason}.Write(w, v)
}
