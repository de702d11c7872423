package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/crypto"
)

// TestVersionNamesCryptoBackend: `wssgw version` tells the static Go build
// from the OpenSSL one (issue 18), as wssgw_build_info does.
func TestVersionNamesCryptoBackend(t *testing.T) {
	out, _, err := runCLI(t, nil, "version")
	require.NoError(t, err)
	assert.Contains(t, out, "crypto "+crypto.Backend()+": "+crypto.BackendVersion())
	assert.Equal(t, crypto.Backend(), buildInfo().CryptoBackend)
}
