// Package template is the template automaton, wssgw's fast path (DESIGN.md
// §4, seed 000): after the DOM engine accepted a message, its bytes are
// learned as constant fragments (all markup and every value a security
// decision depends on) and typed slots (ids, base64, dateTimes, payload
// text and attributes). The templates of a policy are merged in one radix
// automaton; a message that matches one gets WS-Security done on the
// captured values — canonical forms rebuilt by concatenation, digests,
// signature, trust — without XML parsing, and yields the same verified
// facts as the DOM engine.
//
// Whatever the template path cannot decide exactly as the DOM engine would
// (a slot outside its class, a broken binding, an unknown key source) sends
// the message to the DOM engine instead: a miss costs time, never a
// different verdict. Crypto failures on a matched message are rejections
// of the template path itself.
//
// Misses are what a sender forces by inventing shapes, so with
// LimitFirstSight a miss of a shape no accepted message had waits in a
// lane of its claimed signer before the DOM engine runs, or is refused at
// once (firstsight.go): fresh shapes cannot starve hits.
package template
