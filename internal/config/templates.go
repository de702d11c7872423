package config

import "os"

// Templates configures the template automaton, the fast path (DESIGN.md
// §4). Each policy has its own store within these bounds.
type Templates struct {
	// Enabled turns the automaton on; off, every message takes the DOM
	// engine. Default true.
	Enabled bool `mapstructure:"enabled"`
	// MaxTemplates bounds the templates of one policy; the coldest are
	// evicted. Default 1000.
	MaxTemplates int `mapstructure:"maxTemplates"`
	// MaxBytes bounds their estimated memory per policy. Default 64MiB.
	MaxBytes ByteSize `mapstructure:"maxBytes"`
	// LearnPerSecond and LearnBurst bound how fast new shapes are learned:
	// a sender of endless new shapes falls back to the DOM engine.
	// Defaults 10 and 20.
	LearnPerSecond float64 `mapstructure:"learnPerSecond"`
	LearnBurst     int     `mapstructure:"learnBurst"`
	// MaxMessageBytes: larger messages always take the DOM engine and are
	// never learned (their lookup counts as disabled); 0 means no bound.
	// Default 1MiB: learning a message costs several times its size.
	MaxMessageBytes ByteSize `mapstructure:"maxMessageBytes"`
	// ShadowRate is the fraction of template-path messages verified again
	// by the DOM engine; a disagreement rejects the message. Default 0.01.
	ShadowRate float64 `mapstructure:"shadowRate"`
	// LearnAfter: a new shape is learned when the DOM engine accepted it
	// this many times, so one-off shapes (an attacker's fresh shapes, a
	// unique header block) cost no learning and take no place in the
	// store (issue 14). 1 learns at first sight. Default 2.
	LearnAfter int `mapstructure:"learnAfter"`
	// ImportFile, when set, is a file written by `wssgw templates export`
	// whose messages are learned again at start-up (warm start of a new
	// pod). Entries the DOM engine no longer accepts are skipped.
	ImportFile string `mapstructure:"importFile"`
}

// maxLearnAfter bounds templates.learnAfter: the count of sightings is
// held in a byte, and a shape seen more often than this is not one-off.
const maxLearnAfter = 16

// DefaultTemplates are the automaton's defaults.
func DefaultTemplates() Templates {
	return Templates{Enabled: true, MaxTemplates: 1000, MaxBytes: 64 << 20, LearnPerSecond: 10, LearnBurst: 20, ShadowRate: 0.01, MaxMessageBytes: 1 << 20, LearnAfter: 2}
}

func (t Templates) validate(ps *Problems, key string) {
	if !t.Enabled {
		return
	}
	if t.MaxTemplates < 1 {
		ps.add(key+".maxTemplates", "must be at least 1 (set enabled: false to turn templates off), got %d", t.MaxTemplates)
	}
	if t.MaxBytes < 64<<10 {
		ps.add(key+".maxBytes", "must be at least 64KiB, got %s", t.MaxBytes)
	}
	if t.LearnPerSecond <= 0 {
		ps.add(key+".learnPerSecond", "must be positive, got %g", t.LearnPerSecond)
	}
	if t.MaxMessageBytes < 0 {
		ps.add(key+".maxMessageBytes", "must not be negative (0 = no bound), got %d", int64(t.MaxMessageBytes))
	}
	if t.LearnBurst < 1 {
		ps.add(key+".learnBurst", "must be at least 1, got %d", t.LearnBurst)
	}
	if t.LearnAfter < 1 || t.LearnAfter > maxLearnAfter {
		ps.add(key+".learnAfter", "must be between 1 and %d (1 = learn at first sight), got %d", maxLearnAfter, t.LearnAfter)
	}
	if t.ImportFile != "" {
		checkReadable(ps, key+".importFile", t.ImportFile)
	}
	if t.ShadowRate < 0 || t.ShadowRate > 1 {
		ps.add(key+".shadowRate", "must be between 0 and 1, got %g", t.ShadowRate)
	}
}

func checkReadable(ps *Problems, key, file string) {
	f, err := os.Open(file)
	if err != nil {
		ps.add(key, "cannot read: %v", err)
		return
	}
	f.Close()
}
