package config

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestValidateMemory(t *testing.T) {
	tests := map[string]struct {
		mutate func(c *Config)
		want   []string
		msg    string // in the first problem's message
	}{
		"ok/defaults":             {func(*Config) {}, nil, ""},
		"ok/unbounded":            {func(c *Config) { c.Server.Memory.InflightBytes = 0 }, nil, ""},
		"ok/no-queue":             {func(c *Config) { c.Server.Memory.QueueWait = 0 }, nil, ""},
		"ok/workers":              {func(c *Config) { c.Server.Memory.DOMWorkers = 8 }, nil, ""},
		"ok/budget-below-a-route": {func(c *Config) { c.Server.Memory.InflightBytes = 1 << 20 }, nil, ""},
		"ok/dom-share-off":        {func(c *Config) { c.Server.Memory.DOMShare = 0 }, nil, ""},
		"ok/dom-share-whole":      {func(c *Config) { c.Server.Memory.DOMShare = 1 }, nil, ""},
		"ok/dom-share-quarter":    {func(c *Config) { c.Server.Memory.DOMShare = 0.25 }, nil, ""},
		"fail/dom-share-over-1": {func(c *Config) { c.Server.Memory.DOMShare = 1.5 },
			[]string{"server.memory.domShare"}, "from 0 to 1 (0 or 1 = no bound), got 1.5"},
		"fail/dom-share-negative": {func(c *Config) { c.Server.Memory.DOMShare = -0.5 },
			[]string{"server.memory.domShare"}, "got -0.5"},
		"fail/dom-share-nan": {func(c *Config) { c.Server.Memory.DOMShare = math.NaN() },
			[]string{"server.memory.domShare"}, "got NaN"},
		"ok/first-sight-off":   {func(c *Config) { c.Server.Memory.FirstSightShare = 0 }, nil, ""},
		"ok/first-sight-whole": {func(c *Config) { c.Server.Memory.FirstSightShare = 1 }, nil, ""},
		"ok/first-sight-tenth": {func(c *Config) { c.Server.Memory.FirstSightShare = 0.1 }, nil, ""},
		"fail/first-sight-over-1": {func(c *Config) { c.Server.Memory.FirstSightShare = 2 },
			[]string{"server.memory.firstSightShare"}, "server.memory.firstSightShare: must be a fraction of the CPUs from 0 to 1 (0 or 1 = no first-sight lanes), got 2"},
		"fail/first-sight-negative": {func(c *Config) { c.Server.Memory.FirstSightShare = -0.02 },
			[]string{"server.memory.firstSightShare"}, "got -0.02"},
		"fail/first-sight-nan": {func(c *Config) { c.Server.Memory.FirstSightShare = math.NaN() },
			[]string{"server.memory.firstSightShare"}, "got NaN"},
		"fail/negative": {func(c *Config) {
			c.Server.Memory = Memory{InflightBytes: -1, DOMWorkers: -2, QueueWait: -time.Second, RetryAfter: time.Second}
		}, []string{"server.memory.inflightBytes", "server.memory.domWorkers", "server.memory.queueWait"}, "got -1"},
		"fail/retry-after-fraction": {func(c *Config) { c.Server.Memory.RetryAfter = 1500 * time.Millisecond },
			[]string{"server.memory.retryAfter"}, "got 1.5s"},
		"fail/retry-after-zero": {func(c *Config) { c.Server.Memory.RetryAfter = 0 },
			[]string{"server.memory.retryAfter"}, "got 0s"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := valid()
			tc.mutate(&c)
			assert.Equal(t, tc.want, problemKeys(t, c))
			if tc.msg != "" {
				err := c.Validate()
				assert.True(t, strings.Contains(err.Error(), tc.msg), "%v", err)
			}
		})
	}
}
