// Package traffic generates the realistic signed SOAP mix of issue 14, for
// the benchmarks that measure the template automaton on it (bench/templates
// in-process, bench/proxy through the real binary): a dozen operations,
// item lists of 0–100 with a long-tailed length, optional elements, escaped
// and non-ASCII text, from two partner stacks that write envelopes,
// addressing headers and key references differently, each message signed
// by the project's signer. One copy, so both tools measure the same mix.
//
// It also makes fresh-shape messages (fresh.go): what an attacker sends to
// push the gateway off its template path, each one of a structure no
// template store has seen.
package traffic
