package soap

import (
	"io"
)

// Code is the generic fault code, which SOAP 1.1 and 1.2 name differently:
// Client/Server (SOAP 1.1 §4.4.1) and Sender/Receiver (SOAP 1.2 Part 1 §5.4.6).
type Code uint8

const (
	// Sender means the request was at fault and must not be resent unchanged.
	Sender Code = iota
	// Receiver means the gateway or the backend failed to process it.
	Receiver
	// VersionMismatch means the Envelope is not in the namespace of the
	// SOAP version the request announced (SOAP 1.1 §4.4.1, SOAP 1.2 Part 1
	// §5.4.7 and §7.1.4's media types).
	VersionMismatch
)

// codeName returns the fault code's local name in version v.
func (c Code) codeName(v Version) string {
	switch {
	case c == VersionMismatch:
		return "VersionMismatch"
	case c == Receiver && v == V12:
		return "Receiver"
	case c == Receiver:
		return "Server"
	case v == V12:
		return "Sender"
	}
	return "Client"
}

// Fault is a SOAP Fault as wssgw sends it. Reason is shown to the partner,
// so it never says more than the partner may know.
type Fault struct {
	Code Code
	// Subcode is an optional qualified subcode such as wsse:InvalidSecurity
	// (WSS 1.1 §12), given as prefix, local name and namespace.
	Subcode *QName
	Reason  string
	// CorrelationID ties the fault to the gateway's log line.
	CorrelationID string
}

// QName is a qualified name used as a fault subcode value.
type QName struct {
	Prefix, Local, Space string
}

// DetailNS is the namespace of wssgw's fault detail elements.
const DetailNS = "urn:wssgw:fault"

// Write writes the fault as a complete envelope of version v.
func (f Fault) Write(w io.Writer, v Version) error {
	_, err := w.Write(f.Append(nil, v))
	return err
}

// Append appends the fault as a complete envelope of version v to b.
func (f Fault) Append(b []byte, v Version) []byte {
	b = append(b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"...)
	if v == V12 {
		return f.append12(b)
	}
	return f.append11(b)
}

func (f Fault) append11(b []byte) []byte {
	b = append(b, `<soap:Envelope xmlns:soap="`+NS11+`"><soap:Body><soap:Fault><faultcode`...)
	code := "soap:" + f.Code.codeName(V11)
	if f.Subcode != nil {
		// SOAP 1.1 has no subcode element; WSS 1.0 §12 puts the wsse code
		// itself in faultcode.
		b = appendNSDecl(b, f.Subcode)
		code = f.Subcode.Prefix + ":" + f.Subcode.Local
	}
	b = append(b, '>')
	b = append(b, code...)
	b = append(b, "</faultcode><faultstring>"...)
	b = appendEscaped(b, f.Reason)
	b = append(b, "</faultstring>"...)
	b = f.appendDetail(b, "detail")
	return append(b, "</soap:Fault></soap:Body></soap:Envelope>\n"...)
}

func (f Fault) append12(b []byte) []byte {
	b = append(b, `<env:Envelope xmlns:env="`+NS12+`">`...)
	if f.Code == VersionMismatch {
		// SOAP 1.2 Part 1 §5.4.7: a VersionMismatch fault SHOULD say which
		// envelopes the node supports, in an env:Upgrade header block.
		b = append(b, `<env:Header><env:Upgrade>`+
			`<env:SupportedEnvelope qname="env:Envelope"/>`+
			`<env:SupportedEnvelope qname="ns1:Envelope" xmlns:ns1="`+NS11+`"/>`+
			`</env:Upgrade></env:Header>`...)
	}
	b = append(b, `<env:Body><env:Fault><env:Code><env:Value>env:`...)
	b = append(b, f.Code.codeName(V12)...)
	b = append(b, "</env:Value>"...)
	if f.Subcode != nil {
		b = append(b, "<env:Subcode><env:Value"...)
		b = appendNSDecl(b, f.Subcode)
		b = append(b, '>')
		b = append(b, f.Subcode.Prefix+":"+f.Subcode.Local...)
		b = append(b, "</env:Value></env:Subcode>"...)
	}
	b = append(b, `</env:Code><env:Reason><env:Text xml:lang="en">`...)
	b = appendEscaped(b, f.Reason)
	b = append(b, "</env:Text></env:Reason>"...)
	b = f.appendDetail(b, "env:Detail")
	return append(b, "</env:Fault></env:Body></env:Envelope>\n"...)
}

func (f Fault) appendDetail(b []byte, name string) []byte {
	if f.CorrelationID == "" {
		return b
	}
	b = append(b, "<"+name+`><gw:correlationId xmlns:gw="`+DetailNS+`">`...)
	b = appendEscaped(b, f.CorrelationID)
	return append(b, "</gw:correlationId></"+name+">"...)
}

func appendNSDecl(b []byte, q *QName) []byte {
	b = append(b, ` xmlns:`+q.Prefix+`="`...)
	b = appendEscaped(b, q.Space)
	return append(b, '"')
}

// appendEscaped escapes the five XML special characters (XML 1.0 §2.4), so
// that reasons and ids can never inject markup.
func appendEscaped(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '&':
			b = append(b, "&amp;"...)
		case '<':
			b = append(b, "&lt;"...)
		case '>':
			b = append(b, "&gt;"...)
		case '"':
			b = append(b, "&quot;"...)
		case '\'':
			b = append(b, "&apos;"...)
		default:
			b = append(b, c)
		}
	}
	return b
}
