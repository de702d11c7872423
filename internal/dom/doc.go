// Package dom is wssgw's reference WS-Security engine. It processes the
// wsse:Security header of a gated message in document order (Timestamp,
// BinarySecurityToken, UsernameToken, EncryptedKey, ReferenceList,
// EncryptedData, Signature, SignatureConfirmation), verifies every Reference, decrypts, and returns
// the verified facts and the plaintext envelope (wss.Result).
//
// The engine walks a beevik/etree tree of the message, but etree only ever
// sees bytes that internal/xmlscan accepted, and no security decision reads
// an etree value: etree does not normalize attribute values and resolves
// attributes by prefix (security.md §0.3, §0.4). Each etree element is tied
// to the gate's record of the same element (by document order, checked name
// by name, so a parser differential is an error, not a bypass); values,
// namespaces, ids and byte offsets come from the gate, canonical forms from
// internal/c14n over the gated bytes. DigestValues are read from the
// canonical SignedInfo bytes that were verified, never from the tree
// (security.md A8).
//
// Decryption splices the plaintext into the message bytes in place of the
// EncryptedData and gates the whole message again; facts recorded earlier
// follow their elements through the splice by offset.
package dom
