// Package budget bounds what in-flight requests may hold at once, so that a
// burst of large messages is answered with 503 instead of an OOM kill that
// takes every partner's traffic down with the pod (issue 16).
//
// Two bounds, one object shared by every route:
//
//   - bytes: the request body bytes held in memory by all in-flight
//     requests together. A request reserves its declared Content-Length
//     before a byte is read, a chunked one reserves as it reads; a request
//     that does not fit is refused at once. Bytes are released when the
//     request ends, whatever way it ends.
//   - workers: the messages on the DOM engine at once. The engine's working
//     set (the gate's element and attribute arrays, decrypted copies) grows
//     with the message; a message waits a short time for a worker, then is
//     refused.
//
// While template hits flow, the DOM engine is further held to a share of
// the CPUs (share.go), and a message shape never accepted before runs in a
// first-sight lane of its claimed signer, one at a time, refused at once
// when the lane is busy or cooling (lanes.go, issue 14).
//
// The Budget outlives a configuration: a reload hands the same object to
// the new gateway and calls Reconfigure, so that requests admitted under the
// old limits are still counted.
package budget
