package crypto

import "crypto/fips140"

// fipsEnabled reports whether the process runs in FIPS 140-3 mode
// (GODEBUG=fips140=on or only, or a GOFIPS140 build). Then every RSA
// verification goes through crypto/rsa, inside the Go Cryptographic
// Module: the cached-modulus fast path (rsaverify.go) does the same
// arithmetic with filippo.io/bigmod, which is outside the validated
// module boundary, so it must not be used. A variable so that tests can
// exercise both paths in one process; a subprocess test checks the real
// switch.
var fipsEnabled = fips140.Enabled
