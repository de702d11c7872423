package dom

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/reload"
	"github.com/wssgw/wssgw/internal/testvectors"
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// vectorDir holds the WSS4J-made messages (testdata/wss4j, see
// internal/testvectors); tests call needVectors before reading it.
var vectorDir, errVectors = testvectors.Find("wss4j")

func needVectors(t testing.TB) {
	t.Helper()
	testvectors.Path(t, "wss4j")
}

// vectorPolicy trusts the vectors' CA and decrypts with their server key.
func vectorPolicy(t testing.TB, mutate func(*config.Policy)) *wss.Policy {
	t.Helper()
	keys := filepath.Join(vectorDir, "keys")
	p := config.DefaultPolicy()
	p.Trust.CAFiles = []string{filepath.Join(keys, "ca.crt")}
	p.Trust.KnownCertFiles = []string{filepath.Join(keys, "client.crt")}
	p.DecryptionKeys = []config.KeyFiles{{CertFile: filepath.Join(keys, "server.crt"), KeyFile: filepath.Join(keys, "server.key")}}
	if mutate != nil {
		mutate(&p)
	}
	cp, err := wss.Compile("vectors", p, nil, reload.Options{})
	require.NoError(t, err)
	return cp
}

func newEngine(t testing.TB) *Engine {
	t.Helper()
	e, err := New(xmlscan.DefaultConfig())
	require.NoError(t, err)
	return e
}

var createdRE = regexp.MustCompile(`Created>([^<]+)<`)

// createdOf returns the message's Timestamp Created, the injected clock's
// base.
func createdOf(t testing.TB, msg []byte) time.Time {
	t.Helper()
	m := createdRE.FindSubmatch(msg)
	require.NotNil(t, m)
	ts, err := time.Parse(time.RFC3339Nano, string(m[1]))
	require.NoError(t, err)
	return ts
}

func TestWSS4JVectors(t *testing.T) {
	needVectors(t)
	e := newEngine(t)
	p := vectorPolicy(t, nil)
	files, err := filepath.Glob(filepath.Join(vectorDir, "*", "*.xml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		name := filepath.Base(filepath.Dir(f)) + "/" + filepath.Base(f)
		t.Run("ok/"+name, func(t *testing.T) {
			msg, err := os.ReadFile(f)
			require.NoError(t, err)
			now := createdOf(t, msg).Add(time.Second)
			res, err := e.Process(msg, p, now)
			require.NoError(t, err)
			require.NoError(t, p.Check(context.Background(), res, now))
			require.Len(t, res.Signatures, 1)
			assert.Contains(t, res.Signatures[0].Signer.Subject, "CN=client")
			assert.True(t, res.Covered(res.Body), "Body covered")
			assert.True(t, res.Covered(res.Timestamp.Start), "Timestamp covered")
			out, _ := res.Forward(p)
			assert.NotContains(t, string(out), "Security")
			assert.NotContains(t, string(out), "EncryptedData")
			if strings.HasPrefix(filepath.Base(filepath.Dir(f)), "signencr") {
				require.Len(t, res.Decrypted, 1)
				assert.True(t, res.Decrypted[0].Content)
				assert.Equal(t, res.Body, res.Decrypted[0].Start)
			}
		})
		t.Run("fail/expired/"+name, func(t *testing.T) {
			msg, err := os.ReadFile(f)
			require.NoError(t, err)
			_, err = e.Process(msg, p, createdOf(t, msg).Add(time.Hour))
			require.Equal(t, wss.ReasonTimestamp, reasonOf(err), "%v", err)
		})
	}
}
