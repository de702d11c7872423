package dom

import (
	"time"

	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// VerifyDocument gates a plain XML document (no SOAP envelope, no Security
// header) and verifies every ds:Signature in it under policy p at time now,
// with exactly the rules of the WS-Security path (message.signature): the
// policy's allow-list checked before any key is used, the key from the
// trust store through KeyInfo/X509Data (X509Certificate, X509IssuerSerial,
// X509SKI) or a SecurityTokenReference, never KeyValue, KeyName or
// RetrievalMethod; no ds:Object or Manifest; every Reference a bare-name
// "#id" resolved through the id index, with exactly one exclusive c14n
// Transform. It exists for conformance runs over XML Signature test vectors
// (enveloped, enveloping and detached signatures of plain documents); the
// gateway only ever calls Process.
//
// The Result lists the verified signatures; Body is -1 and Security
// {-1,-1}. A document without a ds:Signature fails with ReasonMissing.
// Every failure is a *wss.Error.
func (e *Engine) VerifyDocument(data []byte, p *wss.Policy, now time.Time) (*wss.Result, error) {
	m := e.plainMessage(p, now)
	if err := m.load(data); err != nil {
		return nil, err
	}
	var sigs []int
	for i := range m.doc.Elements {
		if m.is(i, nsDS, "Signature") {
			sigs = append(sigs, i)
		}
	}
	if len(sigs) == 0 {
		return nil, wss.Failf(wss.ReasonMissing, "no ds:Signature in the document")
	}
	for _, s := range sigs {
		if err := m.signature(s); err != nil {
			return nil, err
		}
	}
	if m.doc.Signatures != m.signatures {
		// The gate counts Signature elements by local name; a count that
		// differs from what was verified is a signature nobody checked.
		return nil, wss.Failf(wss.ReasonStructure, "a Signature element that is not a ds:Signature")
	}
	m.res.Document = m.data
	return m.res, nil
}

// plainMessage returns the state of one VerifyDocument or DecryptDocument
// call: no SOAP envelope, header, body or Security header.
func (e *Engine) plainMessage(p *wss.Policy, now time.Time) *message {
	m := &message{engine: e, p: p, now: now.UTC(), plain: true,
		doc: new(xmlscan.Document), sd: new(xmlscan.Document)}
	m.env, m.header, m.body, m.secIdx = -1, -1, -1, -1
	m.res = &wss.Result{Security: [2]int{-1, -1}, Token: -1, Body: -1}
	return m
}
