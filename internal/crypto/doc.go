// Package crypto holds wssgw's XML Security algorithm primitives and its
// local key material.
//
// The primitives are here, the XML processing that selects them is not:
// URI constants and an AllowList that binds each URI to its class
// (algorithms.go), signatures bound to their key type (signature.go),
// digests, RSA-OAEP key transport, RFC 3394 key wrap and AES-GCM/CBC data
// encryption. Decryption failures are one uniform ErrDecrypt, and RSA-1.5
// answers a random key, so no error is an oracle.
//
// Key material: local key pairs (LoadKeyPair, PEM or PKCS#12), certificate
// files (LoadCertificates) and the key strength every key must have
// (CheckPublicKey).
//
// Every error wraps one sentinel (ErrLoad, ErrDecrypt, ...); Reason maps it
// to a label from a closed set for the uniform fault's metric.
//
// Which certificates to believe is internal/trust's (trust stores, CRLs,
// OCSP, the token lookup index, distinguished names), and keeping material
// current as files change is internal/reload's; this package imports
// neither.
package crypto
