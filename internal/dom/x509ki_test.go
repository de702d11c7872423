package dom

import (
	"crypto"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/c14n"
	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/testpki"
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

var (
	x509KIRE   = regexp.MustCompile(`(<wsse:KeyIdentifier [^>]*#X509v3">)([^<]+)(</wsse:KeyIdentifier>)`)
	sigValueRE = regexp.MustCompile(`(<ds:SignatureValue>)([^<]+)(</ds:SignatureValue>)`)
)

// resignKI puts cert into the X509v3 KeyIdentifier of msg and signs its
// SignedInfo (exc-c14n, PrefixList "soapenv", RSA-SHA256, as WSS4J made
// it) with key: a message whose only flaw is the signer.
func resignKI(t *testing.T, msg []byte, key crypto.Signer, cert []byte) []byte {
	t.Helper()
	out := x509KIRE.ReplaceAll(msg, []byte("${1}"+base64.StdEncoding.EncodeToString(cert)+"${3}"))
	var d xmlscan.Document
	require.NoError(t, xmlscan.Scan(out, &d))
	si := -1
	for i := range d.Elements {
		if d.Elements[i].Space == nsDS && d.Elements[i].Local == "SignedInfo" {
			si = i
		}
	}
	require.GreaterOrEqual(t, si, 0)
	canon, err := c14n.Canonicalize(c14n.AlgExcC14N, &d, si, []string{"soapenv"}, nil)
	require.NoError(t, err)
	sum := sha256.Sum256(canon)
	sv, err := key.Sign(rand.Reader, sum[:], crypto.SHA256)
	require.NoError(t, err)
	return sigValueRE.ReplaceAll(out, []byte("${1}"+base64.StdEncoding.EncodeToString(sv)+"${3}"))
}

// TestX509KeyIdentifier: WSS4J's X509_KEY_IDENTIFIER (issue 15) carries the
// signer's certificate in the STR; it is trusted only as a
// BinarySecurityToken's would be.
func TestX509KeyIdentifier(t *testing.T) {
	needVectors(t)
	e := newEngine(t)
	msg, err := os.ReadFile(filepath.Join(vectorDir, "sign-x509", "0000.xml"))
	require.NoError(t, err)
	now := createdOf(t, msg).Add(time.Second)
	dir := t.TempDir()
	rogue := testpki.NewCA(t, "rogue CA").IssueRSA(t, dir, "client")
	caOnly := vectorPolicy(t, func(p *config.Policy) { p.Trust.KnownCertFiles = nil })
	otherCA := vectorPolicy(t, func(p *config.Policy) {
		p.Trust.KnownCertFiles = nil
		p.Trust.CAFiles = []string{testpki.NewCA(t, "other CA").WriteCert(t, dir)}
	})
	serverDER := pemDER(t, filepath.Join(vectorDir, "keys", "server.crt"))
	tests := []struct {
		name   string
		msg    []byte
		p      *wss.Policy
		reason wss.Reason
	}{
		{"ok/chains to the CA", msg, caOnly, 0},
		{"ok/pinned certificate", msg, vectorPolicy(t, func(p *config.Policy) {
			p.Trust.CAFiles, p.Trust.KnownCertFiles = nil, nil
			p.Trust.PinnedCertFiles = []string{filepath.Join(vectorDir, "keys", "client.crt")}
		}), 0},
		{"fail/untrusted certificate that signed", resignKI(t, msg, rogue.Key, rogue.Cert.Raw), caOnly, wss.ReasonUntrusted},
		{"fail/CA not trusted", msg, otherCA, wss.ReasonUntrusted},
		{"fail/trusted certificate, not the signer's", x509KIRE.ReplaceAll(msg, []byte("${1}"+base64.StdEncoding.EncodeToString(serverDER)+"${3}")), caOnly, wss.ReasonSignature},
		{"fail/not a certificate", x509KIRE.ReplaceAll(msg, []byte("${1}AAAA${3}")), caOnly, wss.ReasonToken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, _, err := tt.p.Verify(t.Context(), e, tt.msg, now)
			if tt.reason != 0 {
				require.Error(t, err)
				assert.Equal(t, tt.reason, reasonOf(err), "%v", err)
				return
			}
			require.NoError(t, err)
			require.Len(t, res.Signatures, 1)
			assert.Equal(t, wss.KeyRefX509KeyIdentifier, res.Signatures[0].KeyReference)
			assert.Contains(t, res.Signatures[0].Signer.Subject, "CN=client")
		})
	}
}
