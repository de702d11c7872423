package template

import "testing"

// TestFastBodyGenericScan runs the fast body's proofs with the pure-Go
// block scan, the one other architectures and CPUs without AVX2 use.
func TestFastBodyGenericScan(t *testing.T) {
	saved := haveAVX2
	haveAVX2 = false
	defer func() { haveAVX2 = saved }()
	TestFastBodyVersusGate(t)
	TestFastBodyReplay(t)
}
