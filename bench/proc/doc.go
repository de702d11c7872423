// Package proc runs the wssgw binary for the benchmark commands
// (bench/memory, bench/mtom, bench/proxy) and reads a process's memory
// from /proc: one way to start a gateway, learn its addresses from its
// "listening" log line and measure its peak RSS, so that the commands'
// figures are taken alike.
package proc
