package config

import (
	"fmt"
	"strconv"
	"strings"
)

// ByteSize is a size in bytes. In YAML and environment variables it is a
// plain integer or an integer with a binary unit: 512KiB, 10MiB, 1GiB.
type ByteSize int64

var byteUnits = []struct {
	suffix string
	mult   int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"B", 1},
}

// UnmarshalText parses "1048576", "1024KiB" or "1MiB".
func (s *ByteSize) UnmarshalText(text []byte) error {
	str := strings.TrimSpace(string(text))
	mult := int64(1)
	for _, u := range byteUnits {
		if strings.HasSuffix(str, u.suffix) {
			str, mult = strings.TrimSpace(strings.TrimSuffix(str, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(str, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return fmt.Errorf("invalid size %q: want an integer with an optional KiB, MiB or GiB suffix", text)
	}
	*s = ByteSize(n * mult)
	return nil
}

// String formats the size with the largest exact binary unit.
func (s ByteSize) String() string {
	for _, u := range byteUnits[:3] {
		if s != 0 && int64(s)%u.mult == 0 && int64(s)/u.mult < 1024 && int64(s) >= u.mult {
			return fmt.Sprintf("%d%s", int64(s)/u.mult, u.suffix)
		}
	}
	return strconv.FormatInt(int64(s), 10)
}
