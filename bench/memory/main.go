// Command memory is the memory-budget load test (issue 16): it starts the
// real wssgw binary in front of a real backend (this binary re-executed),
// sends large signed requests (~7 MiB, valid or tampered) from 1, 10 and 32
// connections at once while a stream of small valid signed requests runs,
// and prints, per scenario, wssgw's peak RSS (VmHWM) against the memory
// budget and the chart's default 256Mi limit, the 503s, and the small
// requests' success rate. Each scenario gets a fresh wssgw process, run
// with GOMEMLIMIT as the chart sets it (90 % of the limit).
//
//	go run ./bench/memory -wssgw bin/wssgw
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
)

type options struct {
	wssgw      string
	keys       string
	size       int
	conc       []int
	rounds     int
	smallConns int
	budget     string // server.memory.inflightBytes; "" keeps wssgw's default
	goMemLimit string
	limit      int64 // the container limit the peak is compared with
	kinds      []string
	templates  bool
}

func main() {
	if len(os.Args) > 2 && os.Args[1] == "serve" && os.Args[2] == "backend" {
		serveBackend()
		return
	}
	var o options
	var conc, kinds string
	flag.StringVar(&o.wssgw, "wssgw", "bin/wssgw", "path of the wssgw binary")
	flag.StringVar(&o.keys, "keys", "examples/keys", "directory of the demo keys (partner.crt/.key, ca.crt)")
	flag.IntVar(&o.size, "size", 7<<20, "size of the large requests' payload in bytes")
	flag.StringVar(&conc, "conc", "1,10,32", "concurrent large requests, one scenario each")
	flag.StringVar(&kinds, "kinds", "valid,tampered", "large request kinds: valid (signed) and tampered (signed, then one payload byte changed)")
	flag.IntVar(&o.rounds, "rounds", 2, "large requests each connection sends, one after another")
	flag.IntVar(&o.smallConns, "small-conns", 2, "connections sending small valid signed requests throughout")
	flag.StringVar(&o.budget, "budget", "", "server.memory.inflightBytes for wssgw (e.g. 64MiB, 0 for no bound); empty: wssgw's default")
	flag.StringVar(&o.goMemLimit, "gomemlimit", "230MiB", "GOMEMLIMIT of the wssgw process (the chart: 90 % of the memory limit); off for none")
	flag.BoolVar(&o.templates, "templates", true, "templates.enabled of wssgw (the template path learns the small and the valid large messages)")
	flag.Int64Var(&o.limit, "limit", 256<<20, "the container memory limit the peak RSS is compared with, in bytes (the chart's default 256Mi)")
	flag.Parse()
	var err error
	if o.conc, err = ints(conc); err == nil {
		o.kinds = strings.Split(kinds, ",")
		err = run(o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-memory:", err)
		os.Exit(1)
	}
}

func ints(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("-conc: %q is not a positive number", f)
		}
		out = append(out, n)
	}
	return out, nil
}
