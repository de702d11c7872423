package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/soap"
)

// TestZeepSignedRequests: Python zeep with python-xmlsec signs requests
// (BinarySecurityToken and IssuerSerial forms, SOAP 1.1 and 1.2) that the
// running gateway accepts and forwards.
func TestZeepSignedRequests(t *testing.T) {
	py := zeepPython(t)
	pki := newPartnerPKI(t)
	backend := newRecordingBackend(t, []byte("<ok/>"), "text/xml")
	gw := startGateway(t, pki.securedConfig(backend.URL, ""))
	for _, v := range []string{"1.1", "1.2"} {
		for _, mode := range []string{"binary", "issuerserial"} {
			name := fmt.Sprintf("soap%s/%s", v, mode)
			t.Run("ok/"+name, func(t *testing.T) {
				ns := soap.NS11
				if v == "1.2" {
					ns = soap.NS12
				}
				body := payload(2 << 10)
				in := filepath.Join(t.TempDir(), "plain.xml")
				out := filepath.Join(t.TempDir(), "signed.xml")
				require.NoError(t, os.WriteFile(in, plainEnvelope(ns, body), 0o600))
				cmd := exec.Command(py, filepath.Join(repoRoot, "interop", "zeep", "sign.py"),
					"--in", in, "--out", out, "--key", pki.client.KeyFile, "--cert", pki.client.CertFile, "--mode", mode)
				msg, err := cmd.CombinedOutput()
				require.NoError(t, err, "%s", msg)
				signed, err := os.ReadFile(out)
				require.NoError(t, err)
				hits := backend.count()
				resp := gw.post("/signed", contentType(v), bytes.NewReader(signed))
				rb := readAll(t, resp)
				require.Equal(t, http.StatusOK, resp.StatusCode, "%s\n%s", rb, lastLog(gw))
				require.Equal(t, hits+1, backend.count())
				fwd, hdr := backend.last()
				assert.Contains(t, string(fwd), body)
				assert.NotContains(t, string(fwd), "Security")
				assert.Contains(t, hdr.Get("X-WSS-Subject"), "CN=client")

				// Tampering with the signed payload is rejected.
				tampered := bytes.Replace(signed, []byte("SKU-000000"), []byte("SKU-999999"), 1)
				require.NotEqual(t, signed, tampered)
				requireSecurityFault(t, gw.post("/signed", contentType(v), bytes.NewReader(tampered)), v)
				require.Equal(t, hits+1, backend.count())
			})
		}
	}
}
