package wss

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/reload"
)

// TestDecryptionKeys: DecryptionKeys allocates nothing while the key
// pairs stay (it is asked per EncryptedKey and per template decrypt hit),
// and returns the new pair at once after a reloader swapped one.
func TestDecryptionKeys(t *testing.T) {
	dir := t.TempDir()
	var p Policy
	for _, name := range []string{"a", "b"} {
		file := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(file, []byte("1"), 0o600))
		r, err := reload.New(name, []string{file}, func() (*crypto.KeyPair, error) { return new(crypto.KeyPair), nil }, reload.Options{})
		require.NoError(t, err)
		p.keys = append(p.keys, r)
	}
	current := func() []*crypto.KeyPair { return []*crypto.KeyPair{p.keys[0].Current(), p.keys[1].Current()} }

	first := p.DecryptionKeys()
	assert.Equal(t, current(), first, "ok/first call")
	assert.Zero(t, testing.AllocsPerRun(100, func() { keysSink = p.DecryptionKeys() }), "ok/no allocation while the keys stay")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "b"), []byte("2"), 0o600))
	changed, err := p.keys[1].Check()
	require.NoError(t, err)
	require.True(t, changed)
	got := p.DecryptionKeys()
	assert.Equal(t, current(), got, "ok/after a reload")
	assert.NotSame(t, first[1], got[1], "fail/a stale key pair after a reload")
	assert.Same(t, first[0], got[0])

	var none Policy
	assert.Empty(t, none.DecryptionKeys(), "ok/no keys")
}

// keysSink keeps DecryptionKeys' result escaping, as the engines' use does.
var keysSink []*crypto.KeyPair
