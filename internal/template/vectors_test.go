package template

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/dom"
	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/reload"
	"github.com/wssgw/wssgw/internal/testvectors"
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

var vectorCreated = regexp.MustCompile(`Created>([^<]+)<`)

// TestWSS4JVectorsBothEngines runs every WSS4J-made message (testdata/wss4j;
// among them the X509v3 KeyIdentifier forms of issue 15, for the signer and
// for the EncryptedKey's recipient) through the template engine and the DOM
// engine: the first message of a set is learned, the second of the same
// shape hits, and both engines agree on each.
func TestWSS4JVectorsBothEngines(t *testing.T) {
	dir := testvectors.Path(t, "wss4j")
	keys := filepath.Join(dir, "keys")
	p := config.DefaultPolicy()
	p.Replay = "off"
	p.Trust.CAFiles = []string{filepath.Join(keys, "ca.crt")}
	p.Trust.KnownCertFiles = []string{filepath.Join(keys, "client.crt")}
	p.DecryptionKeys = []config.KeyFiles{{CertFile: filepath.Join(keys, "server.crt"), KeyFile: filepath.Join(keys, "server.key")}}
	pol, err := wss.Compile("vectors", p, nil, reload.Options{})
	require.NoError(t, err)
	d, err := dom.New(xmlscan.DefaultConfig())
	require.NoError(t, err)
	sets, err := filepath.Glob(filepath.Join(dir, "*", "0000.xml"))
	require.NoError(t, err)
	require.NotEmpty(t, sets)
	for _, first := range sets {
		set := filepath.Base(filepath.Dir(first))
		t.Run("ok/"+set, func(t *testing.T) {
			e, err := New(d, xmlscan.DefaultConfig(), NewStore(pol, testOptions(), nil), nil)
			require.NoError(t, err)
			for k, name := range []string{"0000.xml", "0001.xml"} {
				msg, err := os.ReadFile(filepath.Join(filepath.Dir(first), name))
				require.NoError(t, err)
				m := vectorCreated.FindSubmatch(msg)
				require.NotNil(t, m)
				created, err := time.Parse(time.RFC3339Nano, string(m[1]))
				require.NoError(t, err)
				now := created.Add(time.Second)
				got, gerr := e.Process(msg, pol, now)
				want, werr := d.Process(msg, pol, now)
				require.NoError(t, werr)
				require.NoError(t, gerr)
				assert.Empty(t, Compare(got, gerr, want, werr, pol), name)
				if k == 1 {
					assert.Equal(t, metrics.LookupHit, got.Lookup, "the second message of %s hits", set)
				}
			}
		})
	}
}
