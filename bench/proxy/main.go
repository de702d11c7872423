// Command proxy measures wssgw's pass-through overhead: it drives the same
// SOAP load through the real wssgw binary and through a plain
// httputil.ReverseProxy, in the same run, against the same backend, in
// alternating rounds, and prints requests/s, p50 and p99 for both and their
// ratios. The backend and the plain proxy run as separate processes (this
// binary re-executed), like wssgw, so that all three compete for the CPU
// alike.
//
//	go run ./bench/proxy -wssgw bin/wssgw
package main

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"time"
)

type options struct {
	wssgw    string
	conns    int
	size     int
	duration time.Duration
	warmup   time.Duration
	rounds   int
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "serve" {
		serveRole(os.Args[2:])
		return
	}
	var o options
	flag.StringVar(&o.wssgw, "wssgw", "bin/wssgw", "path of the wssgw binary")
	flag.IntVar(&o.conns, "conns", 32, "concurrent keep-alive connections")
	flag.IntVar(&o.size, "size", 4096, "request body size in bytes (a SOAP 1.1 envelope)")
	flag.DurationVar(&o.duration, "duration", 5*time.Second, "measured time per target and round")
	flag.DurationVar(&o.warmup, "warmup", time.Second, "unmeasured load per target before the first round")
	flag.IntVar(&o.rounds, "rounds", 3, "rounds; targets alternate within each round")
	flag.Parse()
	if err := benchmark(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench-proxy:", err)
		os.Exit(1)
	}
}

func benchmark(o options) error {
	procs := &processes{}
	defer procs.stopAll()
	backend, err := procs.startRole("backend", "")
	if err != nil {
		return err
	}
	plain, err := procs.startRole("plain", backend)
	if err != nil {
		return err
	}
	gw, err := procs.startWssgw(o.wssgw, backend)
	if err != nil {
		return err
	}
	targets := []target{{"plain ReverseProxy", "http://" + plain + "/orders"}, {"wssgw", "http://" + gw + "/orders"}}
	body := soapBody(o.size)
	for _, t := range targets {
		if _, err := load(t.url, body, o.conns, o.warmup); err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
	}
	results := make([][]result, len(targets))
	for r := range o.rounds {
		for i := range targets {
			// Alternate the order each round so neither target always
			// runs right after the other's load.
			idx := (i + r) % len(targets)
			res, err := load(targets[idx].url, body, o.conns, o.duration)
			if err != nil {
				return fmt.Errorf("%s: %w", targets[idx].name, err)
			}
			results[idx] = append(results[idx], res)
		}
	}
	report(o, targets, results)
	return nil
}

type target struct{ name, url string }

func report(o options, targets []target, results [][]result) {
	fmt.Printf("bench-proxy: %d-byte SOAP 1.1 POST, %d connections, %d round(s) x %s per target, loopback, GOMAXPROCS default\n",
		o.size, o.conns, o.rounds, o.duration)
	fmt.Printf("%-20s %10s %10s %10s %8s\n", "target", "req/s", "p50", "p99", "errors")
	med := make([]result, len(targets))
	for i, t := range targets {
		med[i] = median(results[i])
		fmt.Printf("%-20s %10.0f %10s %10s %8d\n", t.name, med[i].rps, round(med[i].p50), round(med[i].p99), med[i].errors)
	}
	for i, t := range targets {
		if med[i].firstErr != nil {
			fmt.Printf("first error, %s: %v\n", t.name, med[i].firstErr)
		}
	}
	fmt.Printf("ratio wssgw/plain: req/s %.3f, p50 %.3f, p99 %.3f (goal: req/s >= 0.95)\n",
		med[1].rps/med[0].rps, float64(med[1].p50)/float64(med[0].p50), float64(med[1].p99)/float64(med[0].p99))
}

// median takes the round with the median throughput, keeping its latencies.
func median(rs []result) result {
	s := append([]result(nil), rs...)
	sort.Slice(s, func(i, j int) bool { return s[i].rps < s[j].rps })
	return s[len(s)/2]
}

func round(d time.Duration) string { return d.Round(time.Microsecond).String() }
