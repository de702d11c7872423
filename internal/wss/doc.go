// Package wss is the WS-Security model both engines share: the verified
// facts an engine proves about a message (Result), the compiled per-route
// policy they are checked against (Policy, Check), and the closed set of
// failure reasons (Error, Reason).
//
// An engine never says "valid"; it returns what it proved: which elements
// were covered by which verified signature from which trusted key, what was
// decrypted, the Timestamp and the UsernameToken. Check then requires every
// policy item to be backed by such a fact. The verdict is an explicit AND
// over proven facts, never "no error seen" (security.md A5: XML::Sig
// CVE-2025-40934 and CVE-2026-18568 accepted messages whose signatures were
// all skipped).
package wss
