//go:build !linux

package dom

import "time"

// threadCPU falls back to wall time where the thread CPU clock is not read.
func threadCPU() time.Duration { return time.Duration(time.Now().UnixNano()) }
