package template

import (
	"strings"
	"testing"
)

// TestDuplicateID holds run.duplicateID to the pairwise compare it
// replaced, on ids that share lengths, last bytes or both, and on more ids
// than its stack buffer holds; it never allocates.
func TestDuplicateID(t *testing.T) {
	for _, c := range []struct {
		name string
		ids  []string
		dup  bool
	}{
		{"ok/none", nil, false},
		{"ok/one", []string{"a"}, false},
		{"ok/distinct", []string{"TS-1", "X509-1", "id-2", "SIG-3"}, false},
		{"ok/same-length-same-last-byte", []string{"TS-1a", "id-1a", "KI-1a"}, false},
		{"ok/prefix", []string{"id-1", "id-12"}, false},
		{"fail/equal", []string{"TS-1", "id-2", "TS-1"}, true},
		{"fail/equal-adjacent", []string{"x", "x"}, true},
		{"ok/nine-distinct", strings.Fields("a b c d e f g h i"), false},
		{"fail/nine-last-equal-first", strings.Fields("a b c d e f g h a"), true},
		{"ok/seventeen-distinct", strings.Fields("a b c d e f g h i j k l m n o p q"), false},
		{"fail/seventeen-last-equal-second", strings.Fields("a b c d e f g h i j k l m n o p b"), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &run{}
			var ids []int
			for k, v := range c.ids {
				start := len(r.data)
				r.data = append(r.data, v...)
				r.caps = append(r.caps, span{start, len(r.data)})
				r.data = append(r.data, '"')
				ids = append(ids, k)
			}
			if got := r.duplicateID(ids); got != c.dup {
				t.Fatalf("duplicateID %v, want %v", got, c.dup)
			}
			if n := testing.AllocsPerRun(10, func() { r.duplicateID(ids) }); n != 0 && !raceEnabled {
				t.Fatalf("duplicateID allocates %.0f objects", n)
			}
		})
	}
}
