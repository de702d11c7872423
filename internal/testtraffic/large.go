package testtraffic

import (
	"fmt"
	"strings"
)

// LargeEnvelope is an unsigned SOAP 1.1 envelope of about size bytes made
// of records of about 256 bytes each (an element with an attribute and
// text): the shape of a large business document rather than one huge text
// node, so that the gate's per-element arrays count as they do in
// production (bench/memory, the gateway's memory benchmarks).
func LargeEnvelope(size int) []byte {
	const head = `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><m:Batch xmlns:m="urn:bench">`
	const tail = `</m:Batch></soapenv:Body></soapenv:Envelope>`
	var b strings.Builder
	b.Grow(size + 512)
	b.WriteString(head)
	text := strings.Repeat("lorem ipsum ", 19)
	for n := 0; b.Len() < size-len(tail); n++ {
		fmt.Fprintf(&b, `<m:item n="%d">%s</m:item>`, n, text)
	}
	b.WriteString(tail)
	return []byte(b.String())
}
