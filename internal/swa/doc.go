// Package swa implements the signature transforms of the WS-Security SOAP
// Messages with Attachments (SwA) Profile 1.1 (§5.2-5.4):
// Attachment-Content-Signature-Transform, which digests an attachment's
// canonical content, and Attachment-Complete-Signature-Transform, which
// digests its canonical MIME headers followed by that content.
//
// Both the verifier (internal/dom) and the streaming response signer
// (internal/signer) use it, so that what one side digests is byte for byte
// what the other side digests; the canonical forms follow Apache WSS4J
// (AttachmentUtils.canonizeMimeHeaders, AttachmentContentSignatureTransform),
// the implementation partners run.
//
// Content is transformed as it is written: binary content passes through,
// text content has its line ends normalized on the fly, so a 1 GiB part is
// never held in memory. Only XML content is buffered, up to a bound the
// caller sets, because exclusive C14N needs the whole document; it passes
// the same xmlscan gate as any other XML before it is canonicalized.
package swa
