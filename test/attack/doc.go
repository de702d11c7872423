// Package attack generates hostile variants ("mutants") of a valid
// WS-Security SOAP message, one per attack of the catalogue in
// shared/research/security.md (§1A–§1E): signature wrapping, reference
// semantics, algorithm substitution, HMACOutputLength, untrusted keys,
// comments/CDATA/character references inside values, tampering, parser
// anomalies (DOCTYPE, XXE, entity bombs, duplicate attributes, encodings),
// namespace tricks, resource bombs and Security-header structure.
//
// Mutate works on bytes: it locates elements with internal/xmlscan and splices
// the input, so everything outside the edited spans is kept byte for byte and
// the mutants stay close to what a real attacker would send. Every mutant is
// meant to be rejected by a correct verifier under a policy that requires a
// signed Body and a signed Timestamp from a trusted signer, with wssgw's strict
// gate (DESIGN.md §5.1: no DOCTYPE, no PI, no comments or CDATA in the
// Security header or signed parts, UTF-8 only, limits). Some mutants are legal
// XML that a lenient stack such as WSS4J accepts (a comment inside a
// DigestValue, an ISO-8859-1 declaration over ASCII bytes, a header block it
// ignores); they are attacks on the gateway all the same, and the package
// tests list them.
//
// The envelope family (envelope.go) covers what lies around the signed
// parts: character data, CDATA and comments directly in soap:Envelope and
// soap:Header, extra Envelope children, a UTF-7 declaration. Two more
// generators there cover what Mutate cannot, because the expected verdict
// is not a rejection or the attack is not in the bytes: Injections adds
// unsigned header blocks and Envelope/Header attributes (accepted under the
// default unsigned-content policy, strip, but never forwarded), and Labels
// gives Content-Types that disagree with the message (a charset other than
// UTF-8, the other SOAP version).
//
// Replays returns a separate set: messages that are acceptable once but must
// be rejected after the original was accepted (the replay cache, §1E);
// TokenSwaps adds the same message carrying another certificate of the
// signing key in its unsigned BinarySecurityToken.
//
// KeyResigner and SelfIssuedResigner are ready-made attacker Resigners: a
// minimal WS-Security signer (exc-c14n, RSA-SHA256 or ECDSA-SHA256, a BST,
// Body and Timestamp signed) over an arbitrary envelope.
//
// The package is test tooling; nothing in it is used at run time.
package attack
