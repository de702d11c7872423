package gateway

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/wssgw/wssgw/internal/budget"
	"github.com/wssgw/wssgw/internal/config"
)

// TestMemoryLimits: server.memory reaches the budget whole, domWorkers 0
// as GOMAXPROCS, and the shares as shares of it (issue 14).
func TestMemoryLimits(t *testing.T) {
	procs := gomaxprocs
	gomaxprocs = func() int { return 4 }
	t.Cleanup(func() { gomaxprocs = procs })
	m := config.Memory{InflightBytes: 1 << 20, QueueWait: time.Second, RetryAfter: 2 * time.Second, DOMShare: 0.5, FirstSightShare: 0.02}
	assert.Equal(t, budget.Limits{Bytes: 1 << 20, Workers: 4, QueueWait: time.Second, RetryAfter: 2 * time.Second,
		Share: 0.5, Procs: 4, FirstSightShare: 0.02}, memoryLimits(m))
}
