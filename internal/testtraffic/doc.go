// Package testtraffic generates realistic signed SOAP traffic for tests and
// benchmarks (issue 14): a dozen operations, item lists of 0–100 items
// with a long-tailed length, optional elements, escaped and non-ASCII
// text, from two partner stacks that write envelopes, addressing headers,
// payload prefixes and key references differently, every message signed by
// internal/signer.
//
// The default mix is the one bench/templates measures: the same seed makes
// the same bytes, so figures measured before and after a change are
// comparable. Generator.Variety adds what the template automaton's
// generalization must survive and the mix leaves out: namespace prefixes
// (default namespace, other and shadowing prefixes, redeclarations mid-tree,
// xmlns="" undeclarations, unused declarations, declarations on the Body or
// the Envelope), every way of writing a character (character references,
// raw '>' and CR, "]]>"), attribute values that attribute-value
// normalization changes (tabs, newlines, both quote styles), empty
// elements in both forms and indented payloads. Both engines must give the
// same verdict, facts and forwarded bytes on every message either mode
// makes (internal/template's differential tests).
//
// Fresh makes fresh-shape messages: what an attacker with a trusted key
// sends to push the gateway off its template path, each of a structure no
// template store has seen (bench/proxy's fresh-shape scenario).
//
// The package is test tooling: only tests and bench/ import it (one copy
// for both; bench/internal could not serve internal/'s tests).
package testtraffic
