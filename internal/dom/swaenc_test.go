package dom

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"

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
