// Package dom is wssgw's reference WS-Security engine. It processes the
// wsse:Security header of a gated message in document order (Timestamp,
// BinarySecurityToken, UsernameToken, EncryptedKey, ReferenceList,
// EncryptedData, Signature, SignatureConfirmation), verifies every Reference, decrypts, and returns
// the verified facts and the plaintext envelope (wss.Result).
//
// The engine walks the gate's own record of the message (internal/xmlscan's
// Document: element structure, normalized values, namespaces, ids and byte
// offsets), so exactly one parser reads a message and no parser
// differential is possible inside the gateway; canonical forms come from
// internal/c14n over the gated bytes. (It used to parse the message a
// second time into a beevik/etree tree, only to enumerate child elements:
// half or more of its time, docs/decisions.md.) DigestValues are read from the
// canonical SignedInfo bytes that were verified, never from a parse of them
// (security.md A8).
//
// Decryption splices the plaintext into the message bytes in place of the
// EncryptedData and gates the plaintext where it now stands, with the rules
// and limits of the whole message (xmlscan.ScanReplace: the same verdict
// and Document as gating the whole message again, without the second pass,
// seed 002); facts recorded earlier follow their elements through the
// splice by offset.
package dom
