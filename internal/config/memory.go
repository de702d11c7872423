package config

import "time"

// Memory bounds what in-flight requests hold at once, across all routes
// (internal/budget, issue 16): without it, memory grows with the number of
// large requests in flight until the container is OOM-killed.
type Memory struct {
	// InflightBytes bounds the request body bytes held in memory by all
	// in-flight requests together: a request reserves its Content-Length
	// before its body is read (a chunked one as it is read); one that does
	// not fit gets 503 with Retry-After. Bodies streamed unread
	// (unsafeSkipGate) and MTOM attachments spooled to disk hold none. A
	// plain envelope larger than the whole budget gets 413, whatever the
	// route's maxBodyBytes. 0 means no bound.
	InflightBytes ByteSize `mapstructure:"inflightBytes"`
	// DOMWorkers bounds the messages on the DOM engine at once (template
	// hits do not count); 0 means GOMAXPROCS.
	DOMWorkers int `mapstructure:"domWorkers"`
	// QueueWait is how long a message waits for a DOM worker before it gets
	// 503; 0 means it does not wait.
	QueueWait time.Duration `mapstructure:"queueWait"`
	// RetryAfter is the Retry-After header of those 503s, in whole seconds.
	RetryAfter time.Duration `mapstructure:"retryAfter"`
	// DOMShare is the fraction of the CPUs (GOMAXPROCS) the DOM engine may
	// use while template hits flow (issue 14: fresh shapes, which any
	// sender can make, must not starve hits): at most ceil(DOMShare ×
	// GOMAXPROCS) DOM workers then, paced when that is more than the share
	// (internal/budget, share.go). 0 or 1: no bound beyond DOMWorkers.
	DOMShare float64 `mapstructure:"domShare"`
	// FirstSightShare is the share of the CPUs (GOMAXPROCS) each
	// first-sight lane may use while template hits flow (issue 14): a
	// message of a shape never accepted before runs in the lane of the
	// signer it claims if that signer is known (else in the one lane of
	// all unknown signers), one at a time, paced to FirstSightShare ×
	// GOMAXPROCS of a CPU; what finds its lane busy or cooling gets 503
	// at once (internal/budget, lanes.go). 0 or 1: no lanes.
	FirstSightShare float64 `mapstructure:"firstSightShare"`
}

// Memory defaults: sized for the chart's default 256Mi memory limit
// (docs/operations.md, "Memory budget").
const (
	DefaultInflightBytes ByteSize = 32 << 20
	DefaultQueueWait              = 500 * time.Millisecond
	DefaultRetryAfter             = time.Second
	// DefaultDOMShare leaves template hits at least half the CPUs however
	// many fresh shapes arrive.
	DefaultDOMShare = 0.5
	// DefaultFirstSightShare paces each first-sight lane to 4 % of a CPU
	// on 2 CPUs: a flood of fresh shapes under one claimed signer (or
	// none) gets that much of the DOM engine, and a partner's new shapes
	// under its own known key are not shed with it.
	DefaultFirstSightShare = 0.02
)

// DefaultMemory returns the memory defaults.
func DefaultMemory() Memory {
	return Memory{InflightBytes: DefaultInflightBytes, QueueWait: DefaultQueueWait, RetryAfter: DefaultRetryAfter, DOMShare: DefaultDOMShare,
		FirstSightShare: DefaultFirstSightShare}
}

func (m Memory) validate(ps *Problems, key string) {
	if m.InflightBytes < 0 {
		ps.add(key+".inflightBytes", "must not be negative, got %d", int64(m.InflightBytes))
	}
	if m.DOMWorkers < 0 {
		ps.add(key+".domWorkers", "must not be negative (0 = GOMAXPROCS), got %d", m.DOMWorkers)
	}
	checkNonNegative(ps, key+".queueWait", m.QueueWait)
	if m.RetryAfter < time.Second || m.RetryAfter%time.Second != 0 {
		ps.add(key+".retryAfter", "must be whole seconds, at least 1s, got %s", m.RetryAfter)
	}
	if !(m.DOMShare >= 0 && m.DOMShare <= 1) { // NaN too
		ps.add(key+".domShare", "must be a fraction of the CPUs from 0 to 1 (0 or 1 = no bound), got %v", m.DOMShare)
	}
	if !(m.FirstSightShare >= 0 && m.FirstSightShare <= 1) { // NaN too
		ps.add(key+".firstSightShare", "must be a fraction of the CPUs from 0 to 1 (0 or 1 = no first-sight lanes), got %v", m.FirstSightShare)
	}
}
