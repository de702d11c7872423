// Package gateway is wssgw's HTTP edge: the data listener that accepts SOAP
// over HTTP, routes it by path prefix, forwards it to the route's backend and
// streams the answer back, and the separate admin listener with metrics and
// health. Every error the gateway itself answers with is a SOAP Fault of the
// request's version, produced in one place (fault.go). Server.Reload
// replaces the whole configuration without a restart: a new Gateway is
// built, swapped in atomically and the old one closed after its last
// request (swap.go), with the state that must outlive it carried over
// (carry.go).
package gateway
