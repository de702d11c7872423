package xmlscan_test

import (
	"errors"
	"fmt"

	"github.com/wssgw/wssgw/internal/xmlscan"
)

func ExampleScanner_Scan() {
	sc, err := xmlscan.NewScanner(xmlscan.DefaultConfig())
	if err != nil {
		panic(err)
	}
	msg := []byte(`<s:Envelope xmlns:s="http://www.w3.org/2003/05/soap-envelope">` +
		`<s:Body xmlns:wsu="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd" wsu:Id="b1">` +
		`<m:Ping xmlns:m="urn:example">hi &amp; bye</m:Ping></s:Body></s:Envelope>`)
	var d xmlscan.Document // reuse (or pool) it across requests
	if err := sc.Scan(msg, &d); err != nil {
		panic(err)
	}
	for i, e := range d.Elements {
		fmt.Printf("%d {%s}%s depth=%d bytes=[%d:%d]\n", i, e.Space, e.Local, e.Depth, e.Start, e.End)
	}
	fmt.Printf("text: %s\n", d.Text(2, nil))

	err = sc.Scan([]byte(`<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><r>&x;</r>`), &d)
	// Every error is an *xmlscan.Error; its label is Kind.String (fmt would
	// print a Kind as an error).
	var se *xmlscan.Error
	if errors.As(err, &se) {
		fmt.Println(err, errors.Is(err, xmlscan.KindDoctype), se.Kind.String())
	}
	// Output:
	// 0 {http://www.w3.org/2003/05/soap-envelope}Envelope depth=1 bytes=[0:250]
	// 1 {http://www.w3.org/2003/05/soap-envelope}Body depth=2 bytes=[62:237]
	// 2 {urn:example}Ping depth=3 bytes=[177:228]
	// text: hi & bye
	// xmlscan: doctype: document type declaration at offset 0 true doctype
}
