// Package crypto holds wssgw's key material and trust decisions.
//
// Contract (DESIGN §5.5, "keys come from the trust store"):
//
//   - A key that verifies a message or receives encrypted data comes only
//     from a TrustStore: a certificate chained to a configured CA (never the
//     system roots) or a pinned certificate, checked at the message time for
//     validity, KeyUsage, optional ExtKeyUsage, subject/SAN patterns and
//     CRLs.
//   - Certificates carried in messages (BinarySecurityToken, KeyInfo, chain
//     intermediates) and found through the Index (IssuerSerial, SKI,
//     ThumbprintSHA1) are lookup hints. Nothing is trusted because it was
//     presented: every candidate goes through TrustStore.Verify.
//   - Local key pairs (LoadKeyPair) and trust stores are loaded from files and
//     swapped atomically by a Reloader; readers never block and never see a
//     half-loaded state, and invalid new files keep the previous material.
//   - Every error wraps one sentinel (ErrUntrusted, ErrExpired, ...); Reason
//     maps it to a label from a closed set for the uniform fault's metric.
//
// Signature and encryption algorithms live elsewhere.
//
// The XML Security algorithm primitives are here, the XML processing that
// selects them is not: URI constants and an AllowList that binds each URI
// to its class (algorithms.go), signatures bound to their key type
// (signature.go), digests, RSA-OAEP key transport, RFC 3394 key wrap and
// AES-GCM/CBC data encryption. Decryption failures are one uniform
// ErrDecrypt, and RSA-1.5 answers a random key, so no error is an oracle.
package crypto
