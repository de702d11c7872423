package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// processCPU is the user+system CPU time process pid has used so far, from
// /proc/PID/stat (Linux); ok is false where that cannot be read. The CPU
// one process spends per request is far steadier than requests/s on a
// small machine shared with the load generator and other jobs: it is what
// a change to the gateway's own work moves (issue 14).
func processCPU(pid int) (time.Duration, bool) {
	if pid <= 0 {
		return 0, false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// Fields after the command name, which is in parentheses and may hold
	// spaces: state is field 3, utime 14 and stime 15 (proc(5)).
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	// USER_HZ is 100 on every Linux ABI Go supports.
	return time.Duration(utime+stime) * (time.Second / 100), true
}

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
