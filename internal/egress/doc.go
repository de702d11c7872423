// Package egress is wssgw's client side (issue 15): for a route of kind
// egress, the legacy service behind the sidecar sends plain SOAP, and
// wssgw secures the outbound request for the partner and verifies the
// partner's response before the legacy client sees a byte of it.
//
// Nothing here is a second WS-Security implementation. A request is
// secured by internal/signer, the engine that signs ingress responses
// (Timestamp, X.509 token reference, signature, optional sign-then-encrypt
// of the Body for the partner's certificate); a response is a SOAP message
// like any request, so it is verified by the DOM engine against a
// wss.Policy (trust store, decryption keys, algorithm allow-list,
// Timestamp window), and a streamed trailing-signature MTOM response from
// another wssgw (DESIGN.md §6, seed 001) is put back together by
// internal/signer/trailer first, as `wssgw verify` does, its attachments
// spooled by internal/mime (bounded memory). The requester's side of
// SignatureConfirmation (WSS 1.1 §8.5) is wss.CheckConfirmations.
//
// A response that fails verification never reaches the legacy client: the
// caller gets a *RejectedError, which the gateway answers with its uniform
// 502 fault and logs with the reason. A partner SOAP Fault is handed on as
// a fault; one without any WS-Security header (stock WSS4J and WCF do not
// secure faults by default) passes only while egress.response.
// unsignedFaults is pass, since an unsigned fault asserts nothing but
// "the call failed", which the client must learn either way.
package egress
