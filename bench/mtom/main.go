// Command mtom measures wssgw's memory on a large MTOM upload: it starts the
// real binary with a secured route in front of a backend that discards,
// sends one signed MTOM request whose attachment has the given size
// (chunked, generated on the fly) and prints the gateway's peak RSS
// against the 64 MiB goal (DESIGN.md §6) and the throughput.
//
//	go run ./bench/mtom -wssgw bin/wssgw -size 1GiB
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/wssgw/wssgw/internal/config"
)

// goalMiB is the peak RSS wssgw may reach on the upload.
const goalMiB = 64

type options struct {
	wssgw string
	keys  string
	size  config.ByteSize
	seed  uint64
}

func main() {
	o := options{size: 1 << 30}
	flag.StringVar(&o.wssgw, "wssgw", "bin/wssgw", "path of the wssgw binary")
	flag.StringVar(&o.keys, "keys", "examples/keys", "directory of the demo keys (partner.crt/.key, ca.crt)")
	flag.Func("size", "attachment size: bytes or with a KiB, MiB or GiB suffix (default 1GiB)", func(v string) error {
		return o.size.UnmarshalText([]byte(v))
	})
	flag.Uint64Var(&o.seed, "seed", 1, "seed of the attachment's pseudo-random content")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench-mtom:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	size := int64(o.size)
	if size <= 0 {
		return fmt.Errorf("-size must be positive")
	}
	caFile, err := filepath.Abs(filepath.Join(o.keys, "ca.crt"))
	if err != nil {
		return err
	}
	fmt.Printf("signing a %s attachment (first pass) ...\n", o.size)
	start := time.Now()
	root, err := signedRoot(o.keys, size, o.seed)
	if err != nil {
		return err
	}
	fmt.Printf("signed in %s; root part %d bytes\n", time.Since(start).Round(time.Millisecond), len(root))
	be, err := startBackend()
	if err != nil {
		return err
	}
	defer be.Close()
	gw, err := startWssgw(o.wssgw, be.url, caFile, size)
	if err != nil {
		return err
	}
	defer gw.stop()
	start = time.Now()
	if err := upload(gw.data+mtomPath, root, size, o.seed); err != nil {
		return err
	}
	elapsed := time.Since(start)
	return report(gw, be, size, elapsed)
}

func report(gw *wssgw, be *backend, size int64, elapsed time.Duration) error {
	hwm, err := gw.peakRSS()
	if err != nil {
		return err
	}
	if got := be.received.Load(); got < size {
		return fmt.Errorf("the backend received %d bytes, less than the %d byte attachment", got, size)
	}
	mib := float64(hwm) / (1 << 20)
	fmt.Printf("upload %s in %s: %.1f MiB/s (backend got %d bytes)\n",
		config.ByteSize(size), elapsed.Round(time.Millisecond), float64(size)/(1<<20)/elapsed.Seconds(), be.received.Load())
	fmt.Printf("peak RSS %.1f MiB (goal <= %d MiB, ratio %.2f)\n", mib, goalMiB, mib/goalMiB)
	return nil
}
