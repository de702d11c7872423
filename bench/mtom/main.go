// Command mtom measures wssgw on large MTOM messages through the real
// binary (DESIGN.md §6, §7).
//
// The upload scenario sends one signed MTOM request whose attachment has
// the given size (chunked, generated on the fly) through a secured route
// and prints the gateway's peak RSS against the 64 MiB goal and the
// throughput.
//
// The responses scenario answers a plain SOAP request with an MTOM
// response of each size through three gateways: unsigned pass-through,
// streaming signing (the ds:Signature as the last MIME part) and buffered
// signing (the same attachment inline as base64), and prints, from the
// one run, time to first byte, throughput and peak RSS per mode and the
// ratios the goals are stated in.
//
//	go run ./bench/mtom -wssgw bin/wssgw -scenario all -size 1GiB -sizes 1MiB,16MiB,256MiB,1GiB
package main

import (
	"flag"
	"fmt"
	"os"
	"slices"

	"github.com/wssgw/wssgw/internal/config"
)

// attachXOP is the default digest form of streamed attachments.
const attachXOP = "xop"

// Scenarios of -scenario.
const (
	scenarioUpload    = "upload"
	scenarioResponses = "responses"
	scenarioAll       = "all"
)

type options struct {
	wssgw    string
	keys     string
	scenario string
	size     config.ByteSize // upload
	sizes    []int64         // responses
	reps     int
	seed     uint64
	// attachments is how the streaming gateway digests attachments
	// (responses.attachments).
	attachments string
	// profile, when set, is the directory for CPU profiles of each
	// gateway at the largest size.
	profile        string
	profileSeconds int
}

func main() {
	o := options{size: 1 << 30}
	flag.StringVar(&o.wssgw, "wssgw", "bin/wssgw", "path of the wssgw binary")
	flag.StringVar(&o.keys, "keys", "examples/keys", "directory of the demo keys (partner.crt/.key, gateway.crt/.key, ca.crt)")
	flag.StringVar(&o.scenario, "scenario", scenarioUpload, "upload, responses or all")
	flag.Func("size", "upload: attachment size, bytes or with a KiB, MiB or GiB suffix (default 1GiB)", func(v string) error {
		return o.size.UnmarshalText([]byte(v))
	})
	sizes := flag.String("sizes", "1MiB,16MiB,256MiB,1GiB", "responses: comma-separated attachment sizes, at most 1GiB")
	flag.StringVar(&o.attachments, "attachments", attachXOP, "responses: how streaming digests the attachment: xop (an MTOM response) or swa-content, swa-complete (an SwA response)")
	flag.IntVar(&o.reps, "reps", 5, "responses: most timed repetitions per mode and size (sizes above 512MiB run once); medians are printed")
	flag.StringVar(&o.profile, "profile", "", "responses: write a CPU profile of each gateway during one extra response of the largest size to this directory")
	flag.IntVar(&o.profileSeconds, "profile-seconds", 3, "responses: length of each CPU profile")
	flag.Uint64Var(&o.seed, "seed", 1, "seed of the attachments' pseudo-random content")
	flag.Parse()
	var err error
	if o.sizes, err = parseSizes(*sizes); err == nil {
		err = run(o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-mtom:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	if o.reps < 1 {
		return fmt.Errorf("-reps must be at least 1")
	}
	if !slices.Contains([]string{attachXOP, "swa-content", "swa-complete"}, o.attachments) {
		return fmt.Errorf("-attachments %q: want xop, swa-content or swa-complete", o.attachments)
	}
	switch o.scenario {
	case scenarioUpload:
		return runUpload(o)
	case scenarioResponses:
		return runResponses(o)
	case scenarioAll:
		if err := runUpload(o); err != nil {
			return err
		}
		return runResponses(o)
	}
	return fmt.Errorf("-scenario %q: want %s, %s or %s", o.scenario, scenarioUpload, scenarioResponses, scenarioAll)
}
