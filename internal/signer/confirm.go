package signer

// confirmations writes the wsse11:SignatureConfirmation elements (WSS 1.1
// §8.5): one per SignatureValue of the request, or a single one without
// Value when the request carried no signature, so that the requester can
// tell "nothing to confirm" from "confirmation stripped". They are signed
// like the Timestamp: a requester must be able to trust them.
func (p *plan) confirmations(b *buf) {
	for i, id := range p.confIDs {
		b.open("wsse11:SignatureConfirmation")
		b.attr("xmlns:wsse11", nsWSSE11)
		b.attr("wsu:Id", id)
		if i < len(p.r.Confirm) {
			b.attr("Value", b64String(p.r.Confirm[i]))
		}
		b.empty("wsse11:SignatureConfirmation")
	}
}

func b64String(v []byte) string {
	var b buf
	b.b64raw(v)
	return string(b)
}
