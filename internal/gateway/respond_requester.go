package gateway

import (
	"context"
	"crypto/x509"
	"net/http"

	"github.com/wssgw/wssgw/internal/wss"
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

// signatureValues are the verified SignatureValues of the request, in
// document order: the engines verify every ds:Signature of the Security
// header and record each one's value (wss.Signature.SignatureValue, which
// the replay key uses too), so no second parse of the whole message is
// needed (issue 16: that parse cost another set of gate arrays per
// request).
func signatureValues(res *wss.Result) [][]byte {
	if len(res.Signatures) == 0 || res.Security[0] < 0 {
		return nil
	}
	out := make([][]byte, 0, len(res.Signatures))
	for _, sig := range res.Signatures {
		if len(sig.SignatureValue) > 0 {
			out = append(out, sig.SignatureValue)
		}
	}
	return out
}
