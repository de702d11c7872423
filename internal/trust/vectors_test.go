package trust

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	wcrypto "github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/testvectors"
)

// TestWSS4JVectorTrust verifies the client certificate of the committed
// WSS4J vectors (made with openssl) against their CA, and finds it by the
// references the vectors use.
func TestWSS4JVectorTrust(t *testing.T) {
	dir := testvectors.Path(t, "wss4j/keys")
	f := func(n string) string { return filepath.Join(dir, n) }
	ts, err := NewStore(Options{CAFiles: []string{f("ca.crt")}, KnownCertFiles: []string{f("client.crt"), f("server.crt")}})
	require.NoError(t, err)
	certs, err := wcrypto.LoadCertificates(f("client.crt"))
	require.NoError(t, err)
	at := certs[0].NotBefore.Add(time.Hour)
	for _, p := range []Purpose{PurposeSigning, PurposeEncryption} {
		id, err := ts.Verify(certs[0], nil, at, p)
		require.NoError(t, err)
		assert.Equal(t, "O=Peer,CN=client", id.Subject) // DER order is CN, O
		assert.Equal(t, "O=Peer,CN=Test CA", id.Issuer)
	}
	got, err := ts.Index().ByIssuerSerial("O=Peer,CN=Test CA", certs[0].SerialNumber) // as in the vectors' X509IssuerName
	require.NoError(t, err)
	assert.True(t, got.Equal(certs[0]))
	ski, err := ComputeSKI(certs[0])
	require.NoError(t, err)
	assert.Equal(t, certs[0].SubjectKeyId, ski, "openssl uses RFC 3280 method 1, as ComputeSKI")
	got, err = ts.Index().BySKI(certs[0].SubjectKeyId)
	require.NoError(t, err)
	assert.True(t, got.Equal(certs[0]))
}
