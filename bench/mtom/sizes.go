package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wssgw/wssgw/internal/config"
)

// maxResponseSize is the largest attachment the responses scenario sends:
// a streamed response's attachment is bounded by internal/mime's default
// MaxPartSize (1 GiB), which the gateway applies to responses.
const maxResponseSize = 1 << 30

// parseSizes reads a comma-separated list of sizes ("1MiB,16MiB,1GiB"),
// each positive and at most maxResponseSize, into ascending order without
// repeats.
func parseSizes(s string) ([]int64, error) {
	var out []int64
	for f := range strings.SplitSeq(s, ",") {
		var b config.ByteSize
		if err := b.UnmarshalText([]byte(f)); err != nil {
			return nil, fmt.Errorf("-sizes: %w", err)
		}
		switch {
		case b <= 0:
			return nil, fmt.Errorf("-sizes: %q is not positive", strings.TrimSpace(f))
		case b > maxResponseSize:
			return nil, fmt.Errorf("-sizes: %q is larger than %s, the gateway's bound on a streamed attachment", strings.TrimSpace(f), config.ByteSize(maxResponseSize))
		}
		out = append(out, int64(b))
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// sizeList formats sizes as -sizes takes them.
func sizeList(sizes []int64) string {
	s := make([]string, len(sizes))
	for i, n := range sizes {
		s[i] = config.ByteSize(n).String()
	}
	return strings.Join(s, ",")
}
