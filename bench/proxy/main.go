// Command proxy measures wssgw against a plain httputil.ReverseProxy: it
// drives the same SOAP load through the real wssgw binary and through the
// plain proxy, in the same run, against the same backend, in alternating
// rounds, and prints requests/s, p50 and p99 for both and their ratios.
// Two scenarios: pass-through (an unsecured route, goal >= 0.95) and signed
// (each request carries a WS-Security signature that wssgw verifies on its
// template path, goal >= 0.75; the plain proxy just forwards it). The
// backend and the plain proxy run as separate processes (this binary
// re-executed), like wssgw, so that all three compete for the CPU alike.
//
//	go run ./bench/proxy -wssgw bin/wssgw
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
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
	scenario string
	keys     string
	profile  string
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
	flag.StringVar(&o.scenario, "scenario", "all", "passthrough, signed or all")
	flag.StringVar(&o.profile, "profile", "", "write a CPU profile of wssgw during the signed scenario's first round to this file")
	flag.StringVar(&o.keys, "keys", "examples/keys", "directory of the demo keys (partner.crt/.key, ca.crt) for the signed scenario")
	flag.Parse()
	if err := benchmark(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench-proxy:", err)
		os.Exit(1)
	}
}

// scenario is one comparison: the same bodies through both proxies.
type scenario struct {
	name, path string
	bodies     [][]byte
	goal       float64
}

func benchmark(o options) error {
	scenarios, err := scenariosOf(o)
	if err != nil {
		return err
	}
	procs := &processes{pprof: o.profile != ""}
	defer procs.stopAll()
	backend, err := procs.startRole("backend", "")
	if err != nil {
		return err
	}
	plain, err := procs.startRole("plain", backend)
	if err != nil {
		return err
	}
	caFile, err := filepath.Abs(filepath.Join(o.keys, "ca.crt"))
	if err != nil {
		return err
	}
	gw, admin, err := procs.startWssgw(o.wssgw, backend, caFile)
	if err != nil {
		return err
	}
	for _, sc := range scenarios {
		targets := []target{{"plain ReverseProxy", "http://" + plain + sc.path}, {"wssgw", "http://" + gw + sc.path}}
		before, _, err := templateHits(admin)
		if err != nil {
			return err
		}
		stop := profileDuring(o, admin, sc)
		results, err := compare(o, targets, sc.bodies)
		stop()
		if err != nil {
			return fmt.Errorf("%s: %w", sc.name, err)
		}
		after, all, err := templateHits(admin)
		if err != nil {
			return err
		}
		report(o, sc, targets, results)
		if sc.path == signedPath {
			fmt.Printf("template path: %.0f hits during the scenario (%.0f lookups in all)\n", after-before, all)
		}
	}
	return nil
}

const signedPath = "/signed"

func scenariosOf(o options) ([]scenario, error) {
	var out []scenario
	if o.scenario == "all" || o.scenario == "passthrough" {
		out = append(out, scenario{"pass-through", "/orders", [][]byte{soapBody(o.size)}, 0.95})
	}
	if o.scenario == "all" || o.scenario == "signed" {
		bodies, err := signedBodies(o.keys, o.size, 64)
		if err != nil {
			return nil, fmt.Errorf("signing the scenario's messages: %w", err)
		}
		out = append(out, scenario{"signed", signedPath, bodies, 0.75})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("unknown -scenario %q", o.scenario)
	}
	return out, nil
}

// compare runs the alternating rounds of one scenario.
func compare(o options, targets []target, bodies [][]byte) ([][]result, error) {
	for _, t := range targets {
		if _, err := load(t.url, bodies, o.conns, o.warmup); err != nil {
			return nil, fmt.Errorf("%s: %w", t.name, err)
		}
	}
	results := make([][]result, len(targets))
	for r := range o.rounds {
		for i := range targets {
			// Alternate the order each round so neither target always
			// runs right after the other's load.
			idx := (i + r) % len(targets)
			res, err := load(targets[idx].url, bodies, o.conns, o.duration)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", targets[idx].name, err)
			}
			results[idx] = append(results[idx], res)
		}
	}
	return results, nil
}

type target struct{ name, url string }

func report(o options, sc scenario, targets []target, results [][]result) {
	fmt.Printf("bench-proxy %s: %d-byte SOAP 1.1 POST (%d distinct messages), %d connections, %d round(s) x %s per target, loopback, GOMAXPROCS default\n",
		sc.name, len(sc.bodies[0]), len(sc.bodies), o.conns, o.rounds, o.duration)
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
	fmt.Printf("ratio wssgw/plain (%s): req/s %.3f, p50 %.3f, p99 %.3f (goal: req/s >= %.2f)\n",
		sc.name, med[1].rps/med[0].rps, float64(med[1].p50)/float64(med[0].p50), float64(med[1].p99)/float64(med[0].p99), sc.goal)
}

// median takes the round with the median throughput, keeping its latencies.
func median(rs []result) result {
	s := append([]result(nil), rs...)
	sort.Slice(s, func(i, j int) bool { return s[i].rps < s[j].rps })
	return s[len(s)/2]
}

func round(d time.Duration) string { return d.Round(time.Microsecond).String() }
