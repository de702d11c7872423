package soap_test

import (
	"os"

	"github.com/wssgw/wssgw/internal/soap"
)

func ExampleFault_Write() {
	_, v := soap.Classify("application/soap+xml; charset=utf-8")
	f := soap.Fault{Code: soap.Receiver, Reason: "Backend service timed out", CorrelationID: "c0ffee"}
	_ = f.Write(os.Stdout, v)
	// Output:
	// <?xml version="1.0" encoding="UTF-8"?>
	// <env:Envelope xmlns:env="http://www.w3.org/2003/05/soap-envelope"><env:Body><env:Fault><env:Code><env:Value>env:Receiver</env:Value></env:Code><env:Reason><env:Text xml:lang="en">Backend service timed out</env:Text></env:Reason><env:Detail><gw:correlationId xmlns:gw="urn:wssgw:fault">c0ffee</gw:correlationId></env:Detail></env:Fault></env:Body></env:Envelope>
}
