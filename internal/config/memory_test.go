package config

import (
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
