package dom

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/testmime"
	"github.com/wssgw/wssgw/internal/wss"
)

// TestSwAEncryptedBenchPackages keeps BenchmarkSwAEncryptedVsFloor honest
// where benchmarks do not run (CI runs tests only): the hand-made encrypted
// SwA package is accepted by the DOM engine, its floor inputs check out
// against its digests and signature, and a flipped ciphertext byte fails
// both the engine (the AES-GCM tag) and the floor.
func TestSwAEncryptedBenchPackages(t *testing.T) {
	bs, err := buildSwAEnc(t, t.TempDir(), []swaEncCase{{name: "swa-enc-4KiB", size: 4 << 10}, {name: "complete", size: 10, complete: true}}, false)
	require.NoError(t, err)
	require.Len(t, bs.msgs, 1, "the hand-made packages leave out Attachment-Complete")
	m := bs.msgs[0]
	require.Len(t, m.refs, 3, "Timestamp, Body and the attachment")
	require.Len(t, m.edCiphers, 1)
	ctx := context.Background()
	pkg, err := bs.read(ctx, m)
	require.NoError(t, err)
	require.NoError(t, swaEncProcess(ctx, bs.engine, m, pkg))
	require.NoError(t, pkg.Close())

	t.Run("fail/tampered-ciphertext", func(t *testing.T) {
		bad := *m
		ct := m.edCiphers[0]
		at := bytes.Index(m.pkg, ct)
		require.Positive(t, at, "the ciphertext is in the package as sent")
		bad.pkg = bytes.Clone(m.pkg)
		bad.pkg[at+len(ct)-1] ^= 1
		pkg, err := bs.read(ctx, &bad)
		require.NoError(t, err)
		defer pkg.Close()
		require.Equal(t, wss.ReasonDecrypt, reasonOf(swaEncProcess(ctx, bs.engine, &bad, pkg)))
		bad.edCiphers = [][]byte{bytes.Clone(ct)}
		bad.edCiphers[0][len(ct)-1] ^= 1
		_, err = floorOnce(bs.keys, &bad.benchMsg, nil)
		require.Error(t, err)
	})
}

// lyingSize is an attachment whose Size is not its content's length.
type lyingSize struct {
	*testmime.Part
	size int64
}

func (p lyingSize) Size() int64 { return p.size }

// TestReadBounded: readBounded sizes its buffer by Size but reads the part
// whole whatever Size says, and the engine's limit holds on what was read.
func TestReadBounded(t *testing.T) {
	data := randomBytes(3000)
	tests := []struct {
		name   string
		size   int64
		limit  int64
		reason wss.Reason
	}{
		{name: "ok/exact", size: 3000, limit: 4096},
		{name: "ok/size-short", size: 10, limit: 4096},
		{name: "ok/size-long", size: 4000, limit: 4096},
		{name: "ok/size-negative", size: -1, limit: 4096},
		{name: "ok/at-limit", size: 3000, limit: 3000},
		{name: "fail/over-limit", size: 3000, limit: 2999, reason: wss.ReasonStructure},
		{name: "fail/size-short-over-limit", size: 10, limit: 2999, reason: wss.ReasonStructure},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEngine(t)
			e.bufferLimit = tc.limit
			m := &message{engine: e}
			got, err := m.readBounded(lyingSize{testmime.NewPart("p", "application/octet-stream", data), tc.size})
			if tc.reason != 0 {
				require.Equal(t, tc.reason, reasonOf(err), "%v", err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, data, got)
		})
	}
}
