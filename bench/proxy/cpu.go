package main

import (
	"fmt"
	"time"
)

// cpuPerRequest is a target's process CPU over its measured runs divided
// by their successful requests, or 0 when it was not measured.
func cpuPerRequest(rs []result) time.Duration {
	var cpu time.Duration
	ok := 0
	for _, r := range rs {
		if r.cpu <= 0 {
			return 0
		}
		cpu += r.cpu
		ok += r.ok
	}
	if ok == 0 {
		return 0
	}
	return cpu / time.Duration(ok)
}

// reportCPU prints the CPU per request of both targets' processes over all
// rounds, and their ratio: the plain proxy's cost is the floor of
// forwarding these bytes, the difference is what the gateway adds.
func reportCPU(name string, targets []target, results [][]result) {
	if len(targets) != 2 {
		return
	}
	plain, gw := cpuPerRequest(results[0]), cpuPerRequest(results[1])
	if plain == 0 || gw == 0 {
		return
	}
	fmt.Printf("process CPU per request (%s, user+sys over all rounds): %s %.0f µs, %s %.0f µs, ratio %.2f\n",
		name, targets[0].name, us(plain), targets[1].name, us(gw), float64(gw)/float64(plain))
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
