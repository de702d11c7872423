package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/soap"
)

var signatureValueRE = regexp.MustCompile(`<(?:\w+:)?SignatureValue[^>]*>([^<]*)</`)

// signatureValueOf is the base64 SignatureValue of a signed message, as a
// requester keeps it to check the response's confirmation (line breaks,
// including WSS4J's &#13;, removed).
func signatureValueOf(t *testing.T, msg []byte) string {
	t.Helper()
	m := signatureValueRE.FindSubmatch(msg)
	require.NotNil(t, m, "no SignatureValue")
	v := strings.ReplaceAll(string(m[1]), "&#13;", "")
	return strings.Join(strings.Fields(v), "")
}

// clientVerifyConfig is the requester's configuration for `wssgw verify`
// of the gateway's responses: one policy trusting the partner CA (which
// issued the gateway's signing key) and decrypting with the client key.
func (p *partnerPKI) clientVerifyConfig(t *testing.T) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "client.yaml")
	require.NoError(t, os.WriteFile(f, fmt.Appendf(nil, `
routes:
  - {name: partner, path: /, backend: "http://127.0.0.1:1", policy: responses}
policies:
  responses:
    require: [signature, timestamp]
    trust: {caFiles: [%s]}
    decryptionKeys: [{certFile: %s, keyFile: %s}]
`, p.ca, p.client.CertFile, p.client.KeyFile), 0o600))
	return f
}

// TestVerifyConfirm: the running gateway confirms the request's
// SignatureValue in its signed response (WSS 1.1 §8.5), and `wssgw verify
// --expect-confirmation` accepts the response for that value only: not for
// another request's value, and not once the confirmation was changed.
func TestVerifyConfirm(t *testing.T) {
	pki := newPartnerPKI(t)
	gw := startGateway(t, pki.respondConfig(respondBackend(t, nil).URL))
	o := signer.DefaultOptions()
	o.Signer, o.Certificate = pki.client.Key, pki.client.Cert
	req, err := signer.Secure(plainEnvelope(soap.NS11, payload(512)), o)
	require.NoError(t, err)
	other, err := signer.Secure(plainEnvelope(soap.NS11, payload(512)), o)
	require.NoError(t, err)

	resp := gw.post("/confirm", contentType("1.1"), bytes.NewReader(req))
	body := readAll(t, resp)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s\n%s", body, lastLog(gw))
	mine := signatureValueOf(t, req)
	require.Contains(t, string(body), `Value="`+mine+`"`)
	changed := bytes.Replace(body, []byte(`Value="`+mine[:8]), []byte(`Value="AAAAAAAA`), 1)
	require.NotEqual(t, body, changed)

	cfg := pki.clientVerifyConfig(t)
	dir := t.TempDir()
	file := func(name string, b []byte) string {
		f := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(f, b, 0o600))
		return f
	}
	tests := []struct {
		name, file, expect string
		code               int
		stderr             string
	}{
		{"ok/confirms the request", file("resp.xml", body), mine, 0, ""},
		{"fail/another request's value", file("resp.xml", body), signatureValueOf(t, other), 1, "rejected: policy: SignatureConfirmation 1 confirms"},
		{"fail/confirmation changed", file("changed.xml", changed), mine, 1, "rejected: digest"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := runCLI(t, nil, "verify", "-c", cfg, "--expect-confirmation", tc.expect, tc.file)
			require.Equal(t, tc.code, code, "stdout %s\nstderr %s", out, stderr)
			if tc.code == 0 {
				assert.Contains(t, out, "confirmation 1")
				assert.Contains(t, out, "(signed)")
				return
			}
			assert.Contains(t, stderr, tc.stderr)
		})
	}
}
