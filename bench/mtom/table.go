package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/wssgw/wssgw/internal/config"
)

// Goals of the issue: streaming keeps most of the unsigned throughput,
// beats buffered signing on the largest response.
const (
	goalStreamingVsUnsigned = 0.85
	goalStreamingVsBuffered = 2.0
)

// printResponses prints the table, then the ratios; it fails when a mode
// failed at some size, after printing what was measured.
func printResponses(rs []result, sizes []int64, floor float64) error {
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "size\tmode\treps\tTTFB\ttotal\tMiB/s\tpeak RSS MiB\t")
	var errs []error
	for _, r := range rs {
		if r.err != nil {
			errs = append(errs, r.err)
			fmt.Fprintf(tw, "%s\t%s\t%d\tn/a\tn/a\tn/a\t%.1f\t\n", config.ByteSize(r.size), r.mode, r.reps, mib(r.peak))
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%.1f\t%.1f\t\n", config.ByteSize(r.size), r.mode, r.reps,
			ms(r.ttfb), ms(r.total), r.mibps(), mib(r.peak))
	}
	_ = tw.Flush()
	fmt.Println("MiB/s is attachment bytes per second of total time (buffered sends them as base64, 4/3 as many bytes on the wire); peak RSS is VmHWM of a fresh process per mode and size")
	printRatios(index(rs), sizes, floor)
	if len(errs) > 0 {
		return fmt.Errorf("responses: %w", errors.Join(errs...))
	}
	return nil
}

type key struct {
	mode string
	size int64
}

func index(rs []result) map[key]result {
	m := make(map[key]result, len(rs))
	for _, r := range rs {
		if r.err == nil {
			m[key{r.mode, r.size}] = r
		}
	}
	return m
}

func printRatios(m map[key]result, sizes []int64, floor float64) {
	var per, perFloor []string
	for _, size := range sizes {
		s, ok1 := m[key{"streaming", size}]
		u, ok2 := m[key{"unsigned", size}]
		if ok1 && ok2 {
			r := s.mibps() / u.mibps()
			per = append(per, fmt.Sprintf("%s %.2f%s", config.ByteSize(size), r, missed(r >= goalStreamingVsUnsigned)))
		}
		if ok1 {
			perFloor = append(perFloor, fmt.Sprintf("%s %.2f", config.ByteSize(size), s.mibps()/floor))
		}
	}
	fmt.Printf("streaming/unsigned throughput (goal >= %.2f): %s\n", goalStreamingVsUnsigned, orNA(per))
	fmt.Printf("streaming/digest floor (the digest alone, one core in this process: %.0f MiB/s): %s\n", floor, orNA(perFloor))
	largest := sizes[len(sizes)-1]
	s, ok1 := m[key{"streaming", largest}]
	b, ok2 := m[key{"buffered", largest}]
	if ok1 && ok2 {
		r := b.total.Seconds() / s.total.Seconds()
		fmt.Printf("streaming vs buffered at %s (goal >= %.0fx faster): %.2fx faster%s; peak RSS %.1f MiB vs %.1f MiB (%.3f)\n",
			config.ByteSize(largest), goalStreamingVsBuffered, r, missed(r >= goalStreamingVsBuffered), mib(s.peak), mib(b.peak), float64(s.peak)/float64(b.peak))
	} else {
		fmt.Printf("streaming vs buffered at %s: n/a\n", config.ByteSize(largest))
	}
	if p, ok := m[key{modeBufferedPackage, largest}]; ok {
		fmt.Printf("%s at %s: peak RSS %.1f MiB (goal <= %d MiB, ratio %.2f), %.2f of streaming throughput\n",
			modeBufferedPackage, config.ByteSize(largest), mib(p.peak), goalPackageRSS>>20, float64(p.peak)/goalPackageRSS, ratioOr0(p, s, ok1))
	}
	if st, ok := m[key{modeStreamingStrict, largest}]; ok && ok1 {
		fmt.Printf("%s (the default with an RSA requester) at %s: %.2f of streaming (trailing) throughput, peak RSS %.1f vs %.1f MiB, TTFB %s vs %s\n",
			modeStreamingStrict, config.ByteSize(largest), st.mibps()/s.mibps(), mib(st.peak), mib(s.peak), ms(st.ttfb), ms(s.ttfb))
	}
	printTTFB(m, sizes)
}

// goalPackageRSS is issue 15's bound for a buffered-signed package.
const goalPackageRSS = 64 << 20

// ratioOr0 is p's throughput over s's, 0 when s was not measured.
func ratioOr0(p, s result, ok bool) float64 {
	if !ok {
		return 0
	}
	return p.mibps() / s.mibps()
}

// printTTFB compares the streaming time to first byte across sizes:
// independent of size means a max/min ratio near 1 while the sizes span
// orders of magnitude. The unsigned spread shows the machine's noise.
// buffered-package's TTFB grows with the size: it is the whole read and
// digest.
func printTTFB(m map[key]result, sizes []int64) {
	_, noise := ttfbSpread(m, sizes, "unsigned")
	for _, mode := range []string{"streaming", modeStreamingStrict, modeBufferedPackage} {
		per, spread := ttfbSpread(m, sizes, mode)
		if len(per) == 0 {
			fmt.Printf("%s TTFB: n/a\n", mode)
			continue
		}
		fmt.Printf("%s TTFB: %s; max/min %s (unsigned: max/min %s)\n", mode, strings.Join(per, ", "), spread, noise)
	}
}

// ttfbSpread lists a mode's TTFB per size and formats max/min.
func ttfbSpread(m map[key]result, sizes []int64, mode string) (per []string, spread string) {
	var lo, hi result
	for _, size := range sizes {
		r, ok := m[key{mode, size}]
		if !ok {
			continue
		}
		per = append(per, fmt.Sprintf("%s %s", config.ByteSize(size), ms(r.ttfb)))
		if lo.ttfb == 0 || r.ttfb < lo.ttfb {
			lo = r
		}
		if r.ttfb > hi.ttfb {
			hi = r
		}
	}
	if len(per) == 0 {
		return nil, "n/a"
	}
	return per, fmt.Sprintf("%.2f (%s / %s)", hi.ttfb.Seconds()/lo.ttfb.Seconds(), config.ByteSize(hi.size), config.ByteSize(lo.size))
}

func missed(ok bool) string {
	if ok {
		return ""
	}
	return " (missed)"
}

func orNA(s []string) string {
	if len(s) == 0 {
		return "n/a"
	}
	return strings.Join(s, ", ")
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

// ms formats a duration in milliseconds with three significant digits.
func ms(d time.Duration) string {
	v := d.Seconds() * 1e3
	switch {
	case v < 10:
		return fmt.Sprintf("%.2fms", v)
	case v < 100:
		return fmt.Sprintf("%.1fms", v)
	}
	return fmt.Sprintf("%.0fms", v)
}
