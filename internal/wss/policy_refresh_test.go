package wss

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/reload"
)

// TestRefreshCredentials: a credentials file is reloaded by Refresh (a
// configuration reload that keeps the policy) like key material: a user
// added to the Secret can authenticate, and a broken file keeps the
// previous credentials and reports the error.
func TestRefreshCredentials(t *testing.T) {
	file := filepath.Join(t.TempDir(), "users")
	require.NoError(t, os.WriteFile(file, []byte("alice:one\n"), 0o600))
	p := config.DefaultPolicy()
	p.UsernameToken.CredentialsFile = file
	var observed []error
	cp, err := Compile("p", p, nil, reload.Options{Observer: func(_ string, err error) { observed = append(observed, err) }})
	require.NoError(t, err)
	assert.True(t, cp.Users().CheckText("alice", []byte("one")))
	assert.False(t, cp.Users().CheckText("bob", []byte("two")))

	require.NoError(t, os.WriteFile(file, []byte("alice:one\nbob:two\n"), 0o600))
	require.NoError(t, cp.Refresh())
	assert.True(t, cp.Users().CheckText("bob", []byte("two")), "ok/user added")

	require.NoError(t, os.WriteFile(file, []byte("no colon here\n"), 0o600))
	require.Error(t, cp.Refresh(), "fail/broken file")
	assert.True(t, cp.Users().CheckText("bob", []byte("two")), "the previous credentials stay")
	require.Len(t, observed, 2)
	assert.NoError(t, observed[0])
	assert.Error(t, observed[1])
}
