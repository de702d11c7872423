package config

import "testing"

// FuzzByteSize: a parsed size is never negative and formats back to a value
// that parses to the same size.
func FuzzByteSize(f *testing.F) {
	for _, s := range []string{"10MiB", "1", "0", "1GiB", "99999999999999999999", "-1KiB", " 3 KiB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var s ByteSize
		if s.UnmarshalText([]byte(in)) != nil {
			return
		}
		if s < 0 {
			t.Fatalf("%q parsed to negative %d", in, s)
		}
		var back ByteSize
		if err := back.UnmarshalText([]byte(s.String())); err != nil || back != s {
			t.Fatalf("%q -> %d -> %q -> %d, %v", in, s, s.String(), back, err)
		}
	})
}
