//go:build unix

package testnet

import (
	"net"
	"strconv"
	"syscall"
	"testing"
)

// RefusedAddr returns host:port of a TCP socket bound on 127.0.0.1 that
// never listens, kept until the test ends: a dial there is refused
// (ECONNREFUSED), and since the socket does not set SO_REUSEADDR no other
// socket can bind the port meanwhile.
func RefusedAddr(t testing.TB) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatalf("socket: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatalf("bind: %v", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatalf("getsockname: %v", err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*syscall.SockaddrInet4).Port))
}
