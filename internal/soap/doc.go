// Package soap knows the two SOAP envelope versions at the HTTP edge: which
// version a request uses (from its Content-Type, SOAP 1.1 §6.1.1, SOAP 1.2
// Part 2 §7.1.4, XOP/MTOM §4) and how to write a Fault of that version. It
// never parses a message body.
package soap
