package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/soap"
	"github.com/wssgw/wssgw/internal/testpeer"
)

const storePhotoCID = "photo.0@wssgw.test"

// storeBytesConfig verifies and decrypts on /store, spooling every part.
func (p *partnerPKI) storeBytesConfig(backend, spool string) string {
	return fmt.Sprintf(`
listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0}
shutdown: {drainTimeout: 10s}
mime: {maxParts: 8, maxRootSize: 256KiB, maxPartSize: 64KiB, maxTotalSize: 1MiB, spoolThreshold: 1KiB, spoolDir: %[3]s}
routes:
  - {name: store, path: /store, backend: %[1]s, policy: signed, maxBodyBytes: 2MiB}
policies:
  signed:
    require: [signature, timestamp]
    trust: {caFiles: [%[2]s]}
    decryptionKeys: [{certFile: %[4]s, keyFile: %[5]s}]
`, backend, p.ca, spool, p.server.CertFile, p.server.KeyFile)
}

// TestWSS4JStoreBytesGateway sends what CXF sends with MTOM on — WSS4J
// storeBytesInAttachment: the BinarySecurityToken's certificate (and, with
// encryption, the CipherValues) in MIME parts — through the wssgw binary
// (issue 15): accepted, the backend gets the plaintext root and the Body's
// attachment byte for byte and none of the header-value parts; a tampered
// attachment or certificate part is refused before the backend.
func TestWSS4JStoreBytesGateway(t *testing.T) {
	jar := testpeer.Jar(t, "wss4j")
	p := newPartnerPKI(t)
	photo, photoFile, _ := p.photo(t, 6<<10)

	type msgCase struct{ name, profile, ns string }
	cases := []msgCase{
		{"sign/soap11", "sign-bst", soap.NS11}, {"sign/soap12", "sign-bst", soap.NS12},
		{"sign-encrypt/soap11", "sign-encrypt", soap.NS11}, {"sign-encrypt/soap12", "sign-encrypt", soap.NS12},
	}
	var jobs []testpeer.Job
	for i, c := range cases {
		plain := filepath.Join(p.dir, fmt.Sprintf("plain%d.xml", i))
		require.NoError(t, os.WriteFile(plain, plainEnvelope(c.ns, payload(256)), 0o600))
		jobs = append(jobs, testpeer.Job{ID: c.name, Args: []string{"sign", "--profile", c.profile, "--in", plain,
			"--mime-out", filepath.Join(p.dir, fmt.Sprintf("store%d.mime", i)),
			"--key", p.client.KeyFile, "--cert", p.client.CertFile, "--encrypt-cert", p.server.CertFile,
			"--attachment", photoFile, "--attachment-type", "image/png", "--content-id", storePhotoCID,
			"--xop-expand", "--store-bytes-in-attachment"}})
	}
	// The gateway starts before WSS4J signs: its memory replay store
	// refuses messages created before it started (replay_store_reset).
	backend := newRecordingBackend(t, []byte(`<ok/>`), "text/xml")
	spool := t.TempDir()
	g := startGateway(t, p.storeBytesConfig(backend.URL, spool))
	results := wss4jBatch(t, jar, jobs)

	bstPart := regexp.MustCompile(`BinarySecurityToken [^>]*><xop:Include href="cid:([^"]+)"`)
	for i, c := range cases {
		r := results[c.name]
		require.True(t, r.OK, "WSS4J sign %s: %s", c.name, r.Error)
		pkg, err := os.ReadFile(filepath.Join(p.dir, fmt.Sprintf("store%d.mime", i)))
		require.NoError(t, err)
		t.Run("ok/"+c.name, func(t *testing.T) {
			resp := g.post("/store", r.ContentType, bytes.NewReader(pkg))
			body := readAll(t, resp)
			require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
			got, h := backend.last()
			root, atts := readBackendPackage(t, h.Get("Content-Type"), got)
			assert.NotContains(t, string(root), "Security")
			assert.NotContains(t, string(root), "EncryptedData")
			assert.Contains(t, string(root), "cid:"+storePhotoCID)
			assert.Len(t, atts, 1, "only the Body's attachment goes on")
			assert.True(t, bytes.Equal(photo, atts[storePhotoCID]), "attachment bytes changed")
			assertSpoolEmpty(t, spool)
		})
		m := bstPart.FindSubmatch(pkg)
		require.NotNil(t, m, "no BinarySecurityToken in a part")
		for _, tamper := range []struct{ name, cid string }{{"attachment", storePhotoCID}, {"certificate part", string(m[1])}} {
			t.Run("fail/"+c.name+"/tampered "+tamper.name, func(t *testing.T) {
				data := bytes.Clone(pkg)
				h := bytes.Index(data, []byte("Content-ID: <"+tamper.cid+">"))
				require.GreaterOrEqual(t, h, 0)
				start := h + bytes.Index(data[h:], []byte("\r\n\r\n")) + 4
				data[start+200] ^= 1
				before := backend.count()
				resp := g.post("/store", r.ContentType, bytes.NewReader(data))
				body := readAll(t, resp)
				assert.Equal(t, http.StatusInternalServerError, resp.StatusCode, string(body))
				assert.Contains(t, string(body), "wsse:InvalidSecurity")
				assert.Equal(t, before, backend.count(), "the backend saw the request")
				assertSpoolEmpty(t, spool)
			})
		}
	}
}
