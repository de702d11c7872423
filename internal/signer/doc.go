// Package signer secures plain SOAP 1.1/1.2 envelopes with a WS-Security
// header the way a standard stack (Apache WSS4J, .NET WCF) would: a
// wsu:Timestamp, an X.509 token reference, an XML Signature over the Body,
// the Timestamp and chosen header blocks, and optionally XML Encryption of
// the Body content for a recipient certificate (sign-then-encrypt).
//
// It is the engine behind `wssgw sign` (the client used to test a
// deployment) and buffered response signing (Secure, with
// SignatureConfirmation for responses, WSS 1.1 §8.5). Stream signs
// MTOM/SwA responses while they are copied (DESIGN.md §6): the root part
// goes out first and the ds:Signature content follows as the last MIME
// part, with memory independent of the package size. Every digest and the
// SignedInfo are computed over bytes that passed the xmlscan gate and were
// canonicalized by internal/c14n, never over a re-serialized tree: the
// message is assembled as bytes, scanned, canonicalized, and the
// DigestValue and SignatureValue are filled in afterwards. Both live outside
// the elements they protect (XMLDSig §3.1.1, §3.2), so filling them in does
// not change the digests computed before.
//
// The header is laid out so that a receiver can process it top-down (WSS 1.1
// SOAP Message Security §5): Timestamp, BinarySecurityToken, EncryptedKey,
// Signature. Each token precedes the element that references it, and the
// EncryptedKey precedes the Signature because the signature covers the
// plaintext Body (sign-then-encrypt).
package signer
