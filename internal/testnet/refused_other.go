//go:build !unix

package testnet

import (
	"net"
	"testing"
)

// RefusedAddr returns host:port of a loopback port nothing listens on.
// Without a way to hold the port unbound-but-reserved here, another
// listener may take it; the unix version holds it.
func RefusedAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}
