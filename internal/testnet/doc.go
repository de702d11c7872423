// Package testnet gives tests network addresses with a known behaviour:
// RefusedAddr is a loopback port where every connection is refused and
// that no other process can take while the test runs. Closing an
// httptest server to get a "down" backend is racy: the freed port can be
// bound by a listener of another test process running in parallel, and
// the request then reaches that process instead of being refused.
package testnet
