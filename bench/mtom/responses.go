package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wssgw/wssgw/bench/proc"
	"github.com/wssgw/wssgw/internal/config"
)

// warmSize is the attachment of the untimed request that opens each
// gateway's connections (client to gateway, gateway to backend) before
// the timed ones.
const warmSize = 64 << 10

// result is one mode at one size: medians over the repetitions.
type result struct {
	mode        string
	size        int64
	reps        int
	ttfb, total time.Duration
	peak        int64 // VmHWM of the mode's process at this size
	err         error // the mode failed at this size
}

func (r result) mibps() float64 { return float64(r.size) / (1 << 20) / r.total.Seconds() }

// runResponses measures MTOM responses of each size through three fresh
// gateway processes per size (one per mode, so each VmHWM is the peak of
// that mode at that size), the modes taking turns within each repetition
// so that the machine's noise spreads over all three.
func runResponses(o options) error {
	ms, err := modes(o.keys, slices.Max(o.sizes), o.attachments)
	if err != nil {
		return err
	}
	src := newSource(o.seed)
	floor, err := digestFloor(src, o.attachments, slices.Max(o.sizes))
	if err != nil {
		return err
	}
	be, err := startResponder(src)
	if err != nil {
		return err
	}
	defer be.Close()
	c := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 4}}
	fmt.Printf("== responses: one attachment per response through wssgw (%s); modes %s; streaming attachments: %s (%s package)\n",
		sizeList(o.sizes), modeNames(ms), o.attachments, ms[0].kind)
	if err := checkGateways(o, c, be.url, ms); err != nil {
		return err
	}
	var results []result
	for _, size := range o.sizes {
		rs, err := measureSize(o, c, be.url, ms, size)
		if err != nil {
			return err
		}
		results = append(results, rs...)
	}
	return printResponses(results, o.sizes, floor)
}

func modeNames(ms []mode) string {
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = m.name
	}
	return strings.Join(names, ", ")
}

// startGateways starts one gateway per mode and opens each one's
// connections with an untimed response.
func startGateways(o options, c *http.Client, backend string, ms []mode) ([]*proc.Wssgw, error) {
	gws := make([]*proc.Wssgw, 0, len(ms))
	for _, m := range ms {
		g, err := startGateway(o.wssgw, backend, m, o.profile != "")
		if err == nil {
			gws = append(gws, g)
			_, err = fetch(c, m, fileURL(g, m, warmSize), io.Discard)
		}
		if err != nil {
			stopAll(gws)
			return nil, fmt.Errorf("%s gateway: %w", m.name, err)
		}
	}
	return gws, nil
}

func stopAll(gws []*proc.Wssgw) {
	for _, g := range gws {
		g.Stop()
	}
}

// checkGateways verifies the signatures on gateways of their own, so that
// the measured processes' peaks hold nothing but their size.
func checkGateways(o options, c *http.Client, backend string, ms []mode) error {
	gws, err := startGateways(o, c, backend, ms)
	if err != nil {
		return err
	}
	defer stopAll(gws)
	return checkSignatures(o, c, gws, ms)
}

// measureSize runs one size on fresh gateways: the timed repetitions, then
// (with -profile, at the largest size) the profiled responses.
func measureSize(o options, c *http.Client, backend string, ms []mode, size int64) ([]result, error) {
	gws, err := startGateways(o, c, backend, ms)
	if err != nil {
		return nil, err
	}
	defer stopAll(gws)
	samples, errs := timeReps(c, gws, ms, size, repsFor(size, o.reps))
	if o.profile != "" && size == slices.Max(o.sizes) {
		for i, m := range ms {
			if err := profileResponse(o, c, gws[i], m, size); err != nil {
				return nil, err
			}
		}
	}
	rs := make([]result, len(ms))
	for i, m := range ms {
		rs[i] = summarize(m.name, size, samples[i], errs[i])
		peak, err := gws[i].PeakRSS()
		rs[i].peak = peak
		rs[i].err = errors.Join(rs[i].err, err)
	}
	return rs, nil
}

// timeReps fetches reps responses of size from each gateway, the modes
// taking turns; a mode that fails once is not asked again.
func timeReps(c *http.Client, gws []*proc.Wssgw, ms []mode, size int64, reps int) ([][]sample, []error) {
	samples := make([][]sample, len(ms))
	errs := make([]error, len(ms))
	for range reps {
		for i, m := range ms {
			if errs[i] != nil {
				continue
			}
			s, err := fetch(c, m, fileURL(gws[i], m, size), io.Discard)
			if err == nil {
				err = s.check(m, size)
			}
			if err != nil {
				errs[i] = fmt.Errorf("%s at %s: %w", m.name, config.ByteSize(size), err)
				continue
			}
			samples[i] = append(samples[i], s)
		}
	}
	return samples, errs
}

func fileURL(g *proc.Wssgw, m mode, size int64) string {
	return g.Data + filesPath + m.kind + "/" + strconv.FormatInt(size, 10)
}

// repsFor repeats small sizes (whose times are short and noisy) up to
// maxReps times and large ones once: about 512 MiB per mode and size.
func repsFor(size int64, maxReps int) int {
	return int(max(1, min(int64(maxReps), (512<<20)/size)))
}

// summarize takes the medians of the samples.
func summarize(name string, size int64, ss []sample, err error) result {
	r := result{mode: name, size: size, reps: len(ss), err: err}
	if len(ss) == 0 {
		if r.err == nil {
			r.err = errors.New("no sample")
		}
		return r
	}
	ttfb := make([]time.Duration, len(ss))
	total := make([]time.Duration, len(ss))
	for i, s := range ss {
		ttfb[i], total[i] = s.ttfb, s.total
	}
	r.ttfb, r.total = median(ttfb), median(total)
	return r
}

func median(d []time.Duration) time.Duration {
	slices.Sort(d)
	n := len(d)
	if n%2 == 1 {
		return d[n/2]
	}
	return (d[n/2-1] + d[n/2]) / 2
}
