// Package mime reads and writes the multipart/related packages that carry
// SOAP with attachments: MTOM/XOP (W3C XOP 1.0, SOAP MTOM) and SwA (the
// OASIS WSS SwA profile 1.1). Its name shadows the standard library's mime
// inside this package, which imports that one as stdmime.
//
// # Layers
//
// PartReader is the streaming layer: a hand-written boundary scanner over a
// fixed buffer that returns one StreamPart at a time and never holds more
// than its buffer. It enforces every Limits field except the spooling ones,
// so the gateway's streaming response signer can use it directly.
//
// Read builds a Package on top of it: the root part in memory, attachments
// in memory up to Limits.SpoolThreshold and in a private spool directory
// (os.MkdirTemp, mode 0700) beyond it. Package.Close removes the spool;
// Read removes it itself on every error.
//
// ResolveXOP (on CheckInclude, the XOP rules the DOM engine uses too) and
// Package.CheckReferenced implement the reference rules of
// security.md C7: only cid: URLs (RFC 2392), each attachment referenced at
// most once and every attachment referenced. Package.Writer re-assembles
// the package for the backend from the verified root and the (possibly
// replaced) attachment contents. CheckSigned is the rule of a sender that
// signs a package through its Body (buffered responses, egress requests).
//
// # Strictness
//
// The reader is stricter than RFC 2046 allows receivers to be, because a
// package that two parsers split differently is a smuggling vector:
//
//   - lines end in CRLF; a bare CR or LF in a part header is rejected, and a
//     delimiter is only ever "CRLF--boundary";
//   - a line that starts with the delimiter but continues with anything but
//     transport padding and CRLF (or "--" for the close delimiter) is
//     rejected, since RFC 2046 §5.1.1 forbids it in content;
//   - a package without its close delimiter is truncated (ErrTruncated),
//     never a clean end of input;
//   - Content-ID, Content-Type and Content-Transfer-Encoding appear at most
//     once per part; Content-IDs are unique, compared case-insensitively so
//     that no consumer can confuse two parts;
//   - only the identity transfer encodings (binary, 8bit, 7bit) are
//     accepted. MTOM and the SwA profile's senders use binary; decoding
//     base64 or quoted-printable would add a decoder (and base64
//     malleability, security.md B9) on the path to the signature
//     transforms, so those are rejected with ErrEncoding.
//
// The preamble and the epilogue carry no data and are discarded; the
// epilogue is not read at all.
package mime
