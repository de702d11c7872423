package testnet

import (
	"errors"
	"net"
	"syscall"
	"testing"
	"time"
)

// TestRefusedAddr: a dial is refused, and the port cannot be listened on
// while it is held.
func TestRefusedAddr(t *testing.T) {
	addr := RefusedAddr(t)
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err == nil {
		_ = c.Close()
		t.Fatalf("dial %s succeeded", addr)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial %s: %v, want connection refused", addr, err)
	}
	if l, err := net.Listen("tcp", addr); err == nil {
		_ = l.Close()
		t.Fatalf("another listener took %s", addr)
	}
}
