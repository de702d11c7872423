package signer

import (
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/testpki"
)

// TestXMLSec1 has libxmlsec1 (a second, independent XMLDSig
// implementation on libxml2's canonicalizers) verify the signatures.
// xmlsec1 does not resolve wsse:SecurityTokenReference, so the key is
// given on the command line and the ids are declared with --id-attr.
func TestXMLSec1(t *testing.T) {
	bin, err := exec.LookPath("xmlsec1")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("xmlsec1 is required in CI")
		}
		t.Skip("xmlsec1 not installed")
	}
	p := testPKI(t)
	dir := t.TempDir()
	wsa := []xml.Name{{Space: "http://www.w3.org/2005/08/addressing", Local: "To"}}
	for _, tc := range []struct {
		name   string
		signer *testpki.Leaf
		soap12 bool
		tamper func([]byte) []byte
	}{
		{name: "ok/rsa-soap11", signer: p.rsa},
		{name: "ok/ec-soap12", signer: p.ec, soap12: true},
		{name: "ok/p384-soap11", signer: p.p384},
		{name: "fail/flipped-body-byte", signer: p.rsa, tamper: flipAfter("<ns1:Item n=\"")},
		{name: "fail/flipped-wsa-to", signer: p.ec, tamper: flipAfter("https://")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := opts(tc.signer)
			o.SignHeaders = wsa
			out, err := Secure(soapEnv(tc.soap12, 2048, wsaTo), o)
			require.NoError(t, err)
			if tc.tamper != nil {
				out = tc.tamper(out)
			}
			f := filepath.Join(dir, filepath.Base(tc.name)+".xml")
			require.NoError(t, os.WriteFile(f, out, 0o600))
			soapNS := nsSOAP11
			if tc.soap12 {
				soapNS = nsSOAP12
			}
			msg, err := exec.Command(bin, "--verify", "--pubkey-cert-pem", tc.signer.CertFile,
				"--id-attr:Id", soapNS+":Body",
				"--id-attr:Id", nsWSU+":Timestamp",
				"--id-attr:Id", "http://www.w3.org/2005/08/addressing:To",
				f).CombinedOutput()
			if tc.tamper != nil {
				require.Error(t, err, "xmlsec1 must reject:\n%s", msg)
				return
			}
			require.NoError(t, err, "%s", msg)
			require.Contains(t, string(msg), "SignedInfo References (ok/all): 3/3")
		})
	}
}
