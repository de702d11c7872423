package config

import (
	"fmt"
	"strings"
)

// Problem is one thing wrong with a configuration.
type Problem struct {
	// Key is the key path, e.g. "routes[1].backend".
	Key string
	// Msg says what is wrong with it.
	Msg string
}

func (p Problem) String() string { return p.Key + ": " + p.Msg }

// Problems is every problem found in a configuration; as an error it lists
// them all, one per line.
type Problems []Problem

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return fmt.Sprintf("config: %d problem(s):\n  %s", len(ps), strings.Join(lines, "\n  "))
}

// add records a problem with a formatted message.
func (ps *Problems) add(key, format string, args ...any) {
	*ps = append(*ps, Problem{Key: key, Msg: fmt.Sprintf(format, args...)})
}

// Err returns nil when there are no problems, so a Problems value can be
// returned as an error without the nil-interface trap.
func (ps Problems) Err() error {
	if len(ps) == 0 {
		return nil
	}
	return ps
}
