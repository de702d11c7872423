// Command proxy measures wssgw against a plain httputil.ReverseProxy: it
// drives the same SOAP load through the real wssgw binary and through the
// plain proxy, in the same run, against the same backend, in alternating
// rounds, and prints requests/s, p50 and p99 for both and their ratios.
// Scenarios:
//   - pass-through: an unsecured route, goal >= 0.95;
//   - signed: one repeated 4 KiB signed message (replay off), which wssgw
//     verifies on its template path, goal >= 0.75; the plain proxy just
//     forwards it;
//   - signed-mix: the realistic signed mix of issue 14
//     (internal/testtraffic), every message signed after wssgw started
//     and sent to it once, replay store on, goal >= 0.8;
//   - fresh-shape: wssgw alone, the legitimate mix with and without 10 %
//     fresh-shape traffic from a separate client pool (signed with the
//     mix's key), beside new partners signing with keys of their own;
//     prints the share of legitimate throughput the fresh traffic removes
//     (goal <= 10 %), and what wssgw shed, by reason.
//
// Each secured scenario prints its template hit ratio, from wssgw's
// /metrics before and after, and every scenario of both proxies prints
// each process's CPU time per request over its rounds (cpu.go), steadier
// than requests/s on a shared machine. The backend and the plain proxy run as
// separate processes (this binary re-executed), like wssgw, so that all
// three compete for the CPU alike. docs/performance.md explains the method.
//
//	go run ./bench/proxy -wssgw bin/wssgw
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/wssgw/wssgw/bench/proc"
	"github.com/wssgw/wssgw/internal/metrics"
)

type options struct {
	wssgw       string
	conns       int
	freshConns  int
	freshSlices int
	size        int
	duration    time.Duration
	warmup      time.Duration
	rounds      int
	scenario    string
	keys        string
	profile     string
	seed        uint64
	poolMax     int
	domShare    string
	// firstSightShare is wssgw's server.memory.firstSightShare (empty:
	// its default); partnerKeys how many keys of their own the fresh-shape
	// scenario's new partners sign with (0: the mix's key).
	firstSightShare string
	partnerKeys     int
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "serve" {
		serveRole(os.Args[2:])
		return
	}
	var o options
	flag.StringVar(&o.wssgw, "wssgw", "bin/wssgw", "path of the wssgw binary")
	flag.IntVar(&o.conns, "conns", 32, "concurrent keep-alive connections (the legitimate clients)")
	flag.IntVar(&o.freshConns, "fresh-conns", 64, "connections of the fresh-shape pool (fresh-shape scenario): enough to keep its pace while wssgw queues or sheds fresh shapes (server.memory.queueWait)")
	flag.IntVar(&o.freshSlices, "fresh-slices", 5, "slices each fresh-shape phase is cut into, alternating with the other phase's")
	flag.IntVar(&o.size, "size", 4096, "request body size in bytes (a SOAP 1.1 envelope; pass-through and signed)")
	flag.DurationVar(&o.duration, "duration", 5*time.Second, "measured time per target (or phase) and round")
	flag.DurationVar(&o.warmup, "warmup", time.Second, "unmeasured load per target before the first round")
	flag.IntVar(&o.rounds, "rounds", 3, "rounds; targets (phases) alternate within each round")
	flag.StringVar(&o.scenario, "scenario", "all", "passthrough, signed, mix, fresh, or all")
	flag.StringVar(&o.profile, "profile", "", "write a CPU profile of wssgw to this file: during the signed scenario's warm-up and rounds, (with -scenario mix) its first measured wssgw round of the signed mix, or (with -scenario fresh) the first slice of each phase (the alone one to <file>.alone)")
	flag.StringVar(&o.keys, "keys", "examples/keys", "directory of the demo keys (partner.crt/.key, ca.crt) for the signed scenarios")
	flag.Uint64Var(&o.seed, "seed", 1, "seed of the signed mix")
	flag.IntVar(&o.poolMax, "pool-max", 100000, "most messages pre-signed for one measured round (each about 8 KiB)")
	flag.StringVar(&o.domShare, "dom-share", "", "wssgw's server.memory.domShare (empty: its default), to compare share policies on one machine")
	flag.StringVar(&o.firstSightShare, "first-sight-share", "", "wssgw's server.memory.firstSightShare (empty: its default; 0 turns the first-sight lanes off), to compare lane policies on one machine")
	flag.IntVar(&o.partnerKeys, "partner-keys", 8, "keys of their own (RSA-2048, self-signed, pinned in the mix policy) the fresh-shape scenario's new partners sign with, round robin; 0: the mix's key, the fresh-shape flood's")
	flag.Parse()
	if err := benchmark(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench-proxy:", err)
		os.Exit(1)
	}
}

// scenario is one comparison: the same messages through both proxies.
type scenario struct {
	name, route, path, desc string
	reqs                    []request
	goal                    float64
	lookupsOf               string // which of the scenario's requests its lookups count
}

// environment is a running benchmark: the processes' addresses and the
// signer of the mix's messages.
type environment struct {
	plain, gw, admin string
	plainPID, gwPID  int
	pools            *pools
	// After signed-mix: wssgw's median requests/s on the mix and the
	// messages it did not use, which the fresh-shape scenario sends
	// first (signing is the slow part of preparing a scenario).
	mixRate float64
	mixLeft []request
	summary []string // rows of the summary table
}

func benchmark(o options) error {
	want := func(s string) bool { return o.scenario == "all" || o.scenario == s }
	if !want("passthrough") && !want("signed") && !want("mix") && !want("fresh") {
		return fmt.Errorf("unknown -scenario %q", o.scenario)
	}
	scenarios, err := scenariosOf(o, want)
	if err != nil {
		return err
	}
	procs := &processes{pprof: o.profile != ""}
	defer procs.stopAll()
	backend, err := procs.startRole("backend", "")
	if err != nil {
		return err
	}
	env := &environment{}
	if env.plain, err = procs.startRole("plain", backend); err != nil {
		return err
	}
	env.plainPID = procs.lastPID()
	caFile, err := filepath.Abs(filepath.Join(o.keys, "ca.crt"))
	if err != nil {
		return err
	}
	partner, err := filepath.Abs(filepath.Join(o.keys, "partner.crt"))
	if err != nil {
		return err
	}
	// The pools come first: the new partners' certificates, made with
	// their keys, go into wssgw's configuration. Nothing is signed yet.
	if env.pools, err = newPools(o.keys, o.seed); err != nil {
		return err
	}
	if want("fresh") && o.partnerKeys > 0 {
		if env.pools.partnerKeys, err = newPartnerKeys(o.partnerKeys); err != nil {
			return err
		}
	}
	gc := wssgwConfig{caFile: caFile, partnerCert: partner, partnerKeys: env.pools.partnerKeys,
		domShare: o.domShare, firstSightShare: o.firstSightShare}
	if env.gw, env.admin, err = procs.startWssgw(o.wssgw, backend, gc); err != nil {
		return err
	}
	env.gwPID = procs.wssgwPID()
	for _, sc := range scenarios {
		if err := runFixed(o, env, sc); err != nil {
			return err
		}
	}
	if want("mix") {
		if err := runMix(o, env); err != nil {
			return err
		}
	}
	if want("fresh") {
		if err := runFresh(o, env); err != nil {
			return err
		}
	}
	printSummary(o, env.summary)
	return nil
}

// runFixed runs a scenario of a fixed set of messages, repeated.
func runFixed(o options, env *environment, sc scenario) error {
	targets := []target{{"plain ReverseProxy", "http://" + env.plain + sc.path, &cycle{reqs: sc.reqs}, env.plainPID},
		{"wssgw", "http://" + env.gw + sc.path, &cycle{reqs: sc.reqs}, env.gwPID}}
	before, _, err := scrape(env.admin, sc.route, "partner")
	if err != nil {
		return err
	}
	stop := profileDuring(o, env.admin, sc)
	if err := warm(o, targets); err != nil {
		return fmt.Errorf("%s: %w", sc.name, err)
	}
	results, err := rounds(o, targets, roundHooks{})
	stop()
	if err != nil {
		return fmt.Errorf("%s: %w", sc.name, err)
	}
	after, _, err := scrape(env.admin, sc.route, "partner")
	if err != nil {
		return err
	}
	// The lookups include the warm-up: a fixed set of messages is learned
	// there.
	l := lookups{}
	l.add(before, after)
	env.summary = append(env.summary, report(o, sc, targets, results, l))
	return nil
}

const signedPath = "/signed"

func scenariosOf(o options, want func(string) bool) ([]scenario, error) {
	var out []scenario
	if want("passthrough") {
		body := soapBody(o.size)
		out = append(out, scenario{name: "pass-through", route: "orders", path: "/orders", reqs: requests(body), goal: 0.95,
			desc: fmt.Sprintf("pass-through: %d-byte SOAP 1.1 POST, unsecured route", len(body))})
	}
	if want("signed") {
		bodies, err := signedBodies(o.keys, o.size, 64)
		if err != nil {
			return nil, fmt.Errorf("signing the scenario's messages: %w", err)
		}
		out = append(out, scenario{name: "signed", route: "signed", path: signedPath, reqs: requests(bodies...), goal: 0.75, lookupsOf: "warm-up and rounds",
			desc: fmt.Sprintf("signed: %d-byte signed SOAP 1.1 POST (%d distinct messages, repeated; replay off)", len(bodies[0]), len(bodies))})
	}
	return out, nil
}

// warm sends unmeasured load to each target.
func warm(o options, targets []target) error {
	for _, t := range targets {
		if _, err := load(t.url, t.src, o.conns, o.warmup, loadOptions{}); err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
	}
	return nil
}

// roundHooks run around each measured run of target i, outside the
// measured time (signed-mix signs its next messages there); nil hooks do
// nothing.
type roundHooks struct {
	before func(i int) error
	after  func(i int, res result)
}

// rounds runs the alternating rounds of one scenario.
func rounds(o options, targets []target, h roundHooks) ([][]result, error) {
	results := make([][]result, len(targets))
	for r := range o.rounds {
		for i := range targets {
			// Alternate the order each round so neither target always
			// runs right after the other's load.
			idx := (i + r) % len(targets)
			if h.before != nil {
				if err := h.before(idx); err != nil {
					return nil, err
				}
			}
			cpu0, measured := proc.CPU(targets[idx].pid)
			res, err := load(targets[idx].url, targets[idx].src, o.conns, o.duration, loadOptions{})
			if err != nil {
				return nil, fmt.Errorf("%s: %w", targets[idx].name, err)
			}
			if cpu1, ok := proc.CPU(targets[idx].pid); measured && ok {
				res.cpu = cpu1 - cpu0
			}
			if h.after != nil {
				h.after(idx, res)
			}
			results[idx] = append(results[idx], res)
		}
	}
	return results, nil
}

type target struct {
	name, url string
	src       source
	pid       int // the process serving url, for its CPU per request (cpu.go)
}

// report prints one comparison and returns its row of the summary table.
func report(o options, sc scenario, targets []target, results [][]result, l lookups) string {
	fmt.Printf("bench-proxy %s: %s, %d connections, %d round(s) x %s per target, loopback, GOMAXPROCS default\n",
		sc.name, sc.desc, o.conns, o.rounds, o.duration)
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
		for _, r := range results[i] {
			if r.exhausted {
				fmt.Printf("note: a %s round ran out of pre-signed messages after %s (it outran 1.5 × the fastest rate seen before it, or -pool-max)\n", t.name, round(r.elapsed))
			}
		}
	}
	reportCPU(sc.name, targets, results)
	ratio := med[1].rps / med[0].rps
	verdict := "met"
	if ratio < sc.goal {
		verdict = "NOT MET"
	}
	fmt.Printf("ratio wssgw/plain (%s): req/s %.3f, p50 %.3f, p99 %.3f (goal: req/s >= %.2f, %s)\n",
		sc.name, ratio, float64(med[1].p50)/float64(med[0].p50), float64(med[1].p99)/float64(med[0].p99), sc.goal, verdict)
	hit := "–"
	if l.total() > 0 {
		fmt.Printf("template lookups during %s (%s): %s\n", sc.name, sc.lookupsOf, l)
		hit = fmt.Sprintf("%.3f", l[metrics.LookupHit]/l.total())
	}
	return fmt.Sprintf("| %s | %.0f | %.0f | **%.3f** (≥ %.2f, %s) | %s / %s | %s / %s | %s |",
		sc.name, med[0].rps, med[1].rps, ratio, sc.goal, verdict,
		round(med[0].p50), round(med[1].p50), round(med[0].p99), round(med[1].p99), hit)
}

// printSummary prints the scenarios' rows as a Markdown table, to paste
// into docs/performance.md.
func printSummary(o options, rows []string) {
	fmt.Println()
	fmt.Printf("summary (Markdown; %d connections, %d round(s) x %s, median round):\n\n", o.conns, o.rounds, o.duration)
	fmt.Println("| scenario | plain req/s | wssgw req/s | wssgw/plain (goal) | p50 plain / wssgw | p99 plain / wssgw | template hit ratio |")
	fmt.Println("|---|---:|---:|---|---:|---:|---:|")
	for _, r := range rows {
		fmt.Println(r)
		if strings.HasPrefix(r, "| fresh-shape") {
			defer fmt.Println("\nfresh-shape row: both req/s columns are wssgw's on the legitimate mix, alone and with the fresh-shape pool beside it, over all rounds.")
		}
	}
}

// median takes the round with the median throughput, keeping its latencies.
func median(rs []result) result {
	s := append([]result(nil), rs...)
	sort.Slice(s, func(i, j int) bool { return s[i].rps < s[j].rps })
	return s[len(s)/2]
}

func round(d time.Duration) string { return d.Round(time.Microsecond).String() }
