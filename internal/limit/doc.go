// Package limit holds the rate and concurrency limits of routes and of
// client identities (issue 16): a token bucket and an in-flight bound for a
// route as a whole, for each client address before the body is read, and
// for each verified signer after verification.
//
// Its state (buckets, in-flight counts, the remembered clients) outlives a
// configuration reload: a Set is handed from the old gateway to the new one
// and reconfigured in place, so a reload neither refills every bucket nor
// forgets the requests in flight.
package limit
