package gateway

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/base64"
	"net/http"

	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// requester is what the response needs to know about the verified request:
// the signer's certificate (to encrypt for) and the SignatureValues to
// confirm (WSS 1.1 §8.5).
type requester struct {
	cert   *x509.Certificate
	values [][]byte
}

type requesterKey struct{}

// withRequester carries the verified request's facts to the response
// hook: the proxy's outbound request shares the inbound one's context.
func withRequester(r *http.Request, res *wss.Result, confirm bool) *http.Request {
	req := &requester{}
	if res != nil {
		if id := res.Signer(); id != nil {
			req.cert = id.Certificate
		}
		if confirm {
			req.values = signatureValues(res)
		}
	}
	return r.WithContext(context.WithValue(r.Context(), requesterKey{}, req))
}

func requesterOf(r *http.Request) *requester {
	if r == nil {
		return nil
	}
	req, _ := r.Context().Value(requesterKey{}).(*requester)
	return req
}

func (r *requester) certificate() *x509.Certificate {
	if r == nil {
		return nil
	}
	return r.cert
}

// signatureValues are the values to confirm: nil (one confirmation
// without Value) when the request had no signature.
func (r *requester) signatureValues() [][]byte {
	if r == nil {
		return nil
	}
	return r.values
}

// signatureValues reads the SignatureValue of every ds:Signature of the
// verified Security header from the plaintext document. wss.Result does not
// carry them; the engine verified every signature of the header, so each
// one found there is a verified one.
func signatureValues(res *wss.Result) [][]byte {
	if len(res.Signatures) == 0 || res.Security[0] < 0 {
		return nil
	}
	var d xmlscan.Document
	if err := xmlscan.Scan(res.Document, &d); err != nil {
		return nil // it passed the gate once; cannot happen
	}
	sec := -1
	for e := range d.Elements {
		if d.Elements[e].Start == res.Security[0] {
			sec = e
			break
		}
	}
	if sec < 0 {
		return nil
	}
	var out [][]byte
	for c := d.FirstChild(sec); c >= 0; c = d.NextSibling(c) {
		el := &d.Elements[c]
		if el.Space != xmlscan.NamespaceDSig || el.Local != "Signature" {
			continue
		}
		for v := d.FirstChild(c); v >= 0; v = d.NextSibling(v) {
			if d.Elements[v].Space == xmlscan.NamespaceDSig && d.Elements[v].Local == "SignatureValue" {
				if b, err := base64.StdEncoding.DecodeString(string(stripSpace(d.Text(v, nil)))); err == nil {
					out = append(out, b)
				}
			}
		}
	}
	return out
}

// stripSpace drops the whitespace that base64Binary allows between
// characters (XML Schema Part 2 §3.2.16).
func stripSpace(b []byte) []byte {
	return bytes.Map(func(r rune) rune {
		switch r {
		case ' ', '\t', '\r', '\n':
			return -1
		}
		return r
	}, b)
}
