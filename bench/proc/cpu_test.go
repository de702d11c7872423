package proc

import (
	"os"
	"runtime"
	"testing"
	"time"
)

// TestCPU: this process's CPU time reads and grows with work, by pid and as
// SelfCPU; an unknown process reads as not measured.
func TestCPU(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	before, ok := CPU(os.Getpid())
	self0 := SelfCPU()
	if !ok {
		t.Fatal("cannot read this process's CPU time")
	}
	deadline := time.Now().Add(50 * time.Millisecond)
	for x := 0; time.Now().Before(deadline); x++ {
		_ = x * x
	}
	after, ok := CPU(os.Getpid())
	if !ok || after <= before {
		t.Fatalf("CPU time %v then %v (ok %v)", before, after, ok)
	}
	if self1 := SelfCPU(); self1 <= self0 {
		t.Fatalf("SelfCPU %v then %v", self0, self1)
	}
	if _, ok := CPU(0); ok {
		t.Fatal("pid 0 measured")
	}
}
