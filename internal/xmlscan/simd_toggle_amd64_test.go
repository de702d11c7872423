package xmlscan

// withoutSIMD runs f with the assembly steps switched off, so that the
// byte and word loops alone decide: tests hold the gate with its SIMD
// steps to the gate without them. Not safe for parallel tests (none in
// this package run in parallel).
func withoutSIMD(f func()) {
	n, w := haveNameSIMD, haveWideSIMD
	haveNameSIMD, haveWideSIMD = false, false
	defer func() { haveNameSIMD, haveWideSIMD = n, w }()
	f()
}

// simdOn reports whether this CPU runs the assembly steps at all.
func simdOn() bool { return haveNameSIMD || haveWideSIMD }
