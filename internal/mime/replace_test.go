package mime

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReplaceSizesItsBuffer: the decrypted plaintext of an attachment
// (bytes.Reader, whose length is known) is copied into one buffer of its
// size when it stays in memory, and into at most one threshold-sized one
// when it is spooled; bytes.Buffer's doubling allocated about four times a
// 1 MiB part (issue 14).
func TestReplaceSizesItsBuffer(t *testing.T) {
	const size = 1 << 20
	plain := bytes.Repeat([]byte("p"), size)
	tests := []struct {
		name      string
		threshold int64
		maxAlloc  uint64 // bytes allocated by Replace
	}{
		{name: "ok/in-memory", threshold: 2 << 20, maxAlloc: size + 64<<10},
		{name: "ok/spooled", threshold: 256 << 10, maxAlloc: 256<<10 + 96<<10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lim := testLimits(t)
			lim.MaxPartSize, lim.MaxTotalSize, lim.SpoolThreshold = 4<<20, 8<<20, tc.threshold
			p := readPkg(t, lim, ctMTOM, pkg(part(hdrRoot, envXOP), att("a", "ciphertext")))
			defer p.Close()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			err := p.Replace("a", nil, bytes.NewReader(plain))
			runtime.ReadMemStats(&after)
			require.NoError(t, err)
			a, _ := p.Attachment("a")
			require.Equal(t, string(plain), content(t, a))
			require.LessOrEqual(t, after.TotalAlloc-before.TotalAlloc, tc.maxAlloc, "bytes allocated by Replace")
		})
	}
}
