package signer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// zeepPython sets up (or finds cached) the zeep peer's virtualenv
// (interop/zeep/setup.sh). Without python3 the test is skipped, except in
// CI where the peer is mandatory.
func zeepPython(t *testing.T) string {
	t.Helper()
	fail := t.Skipf
	if os.Getenv("CI") == "true" {
		fail = t.Fatalf
	}
	if _, err := exec.LookPath("python3"); err != nil {
		fail("python3 not installed: %v", err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command("bash", filepath.Join("..", "..", "interop", "zeep", "setup.sh"))
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		fail("zeep venv: %v: %s", err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// TestZeepVerifiesSecure has zeep 4.3.3 (python-xmlsec), as a zeep client
// checks a signed response (interop/zeep/verify.py: zeep's
// MemorySignature.verify with the gateway's certificate, and the Body
// covered), verify what buffered response signing produces (issue 15): SOAP
// 1.1 and 1.2, every key reference form (zeep takes the key from its
// configuration, not from KeyInfo), with SignatureConfirmation; a changed
// Body byte is rejected. zeep does not decrypt: a Body encrypted for the
// requester (encryptForRequester) fails its check, and zeep has no MTOM or
// SwA support on responses, so packages are not tried.
func TestZeepVerifiesSecure(t *testing.T) {
	py := zeepPython(t)
	p := testPKI(t)
	dir := t.TempDir()
	cases := []struct {
		name    string
		soap12  bool
		ref     string
		confirm bool
		encrypt bool
		tamper  func([]byte) []byte
	}{
		{name: "ok/bst-soap11", ref: RefBST},
		{name: "ok/bst-soap12", soap12: true, ref: RefBST},
		{name: "ok/issuer-serial", ref: RefIssuerSerial},
		{name: "ok/ski", ref: RefSKI},
		{name: "ok/thumbprint-soap12", soap12: true, ref: RefThumbprint},
		{name: "ok/signature-confirmation", ref: RefBST, confirm: true},
		{name: "fail/flipped-body-byte", ref: RefBST, tamper: flipAfter("<ns1:Item n=\"")},
		{name: "fail/encrypted-body-zeep-does-not-decrypt", ref: RefBST, encrypt: true},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := opts(p.rsa)
			o.KeyReference = c.ref
			if c.confirm {
				o.SignatureConfirmation, o.Confirm = true, [][]byte{{1, 2, 3}}
			}
			if c.encrypt {
				o.EncryptFor = p.server.Cert
			}
			out, err := Secure(soapEnv(c.soap12, 2048, ""), o)
			require.NoError(t, err)
			if c.tamper != nil {
				out = c.tamper(out)
			}
			f := filepath.Join(dir, fmt.Sprintf("%02d.xml", i))
			require.NoError(t, os.WriteFile(f, out, 0o600))
			cmd := exec.Command(py, filepath.Join("..", "..", "interop", "zeep", "verify.py"), "--in", f, "--cert", p.rsa.CertFile)
			stdout, _ := cmd.Output() // exit 1 on a rejection: the JSON says why
			var r struct {
				OK     bool     `json:"ok"`
				Error  string   `json:"error"`
				Signed []string `json:"signed"`
			}
			require.NoError(t, json.Unmarshal(bytes.TrimSpace(stdout), &r), "zeep output %q", stdout)
			if strings.HasPrefix(c.name, "fail/") {
				assert.False(t, r.OK, "zeep must reject")
				t.Logf("zeep: %s", r.Error)
				return
			}
			require.True(t, r.OK, "zeep: %s", r.Error)
			assert.Subset(t, r.Signed, []string{"Body", "Timestamp"})
			if c.confirm {
				assert.Contains(t, r.Signed, "SignatureConfirmation")
			}
		})
	}
}
