package e2e

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/soap"
	"github.com/wssgw/wssgw/internal/testpeer"
)

// cxfPartnerFlags are the serve flags of a CXF partner that signs its
// responses over Body and Timestamp with RSA-SHA256 and, when it
// encrypts, with AES-256-GCM: WSS4J's defaults (RSA-SHA1, the Body only,
// AES-128-CBC) are what wssgw's default policy refuses.
func (p *partnerPKI) cxfPartnerFlags(extra ...string) []string {
	args := []string{"--key", p.server.KeyFile, "--cert", p.server.CertFile, "--ca", p.ca, "--sign-timestamp",
		"--signature-algorithm", "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
		"--digest-algorithm", "http://www.w3.org/2001/04/xmlenc#sha256",
		"--symmetric-algorithm", "http://www.w3.org/2009/xmlenc11#aes256-gcm"}
	return append(args, extra...)
}

// cxfEgressConfig is the legacy service's sidecar: egress routes signing
// with the client key — /files to the CXF service that requires a
// signature (it answers MTOM), /enc/files to the one that requires the
// Body encrypted too (encrypted for its certificate), /tampered/files to
// the first through tap — and the partner's responses verified by policy
// "partner" (the test CA; the client key decrypts what CXF encrypts for
// the request's signer).
// The paths are the services' own (prefix: "/soap12" for SOAP 1.2), so the
// routes' backends are the services' base URLs; a CXF service's first
// call, cold JIT on a busy machine, may take more than the default 30s.
func (p *partnerPKI) cxfEgressConfig(prefix, signed, encrypted, tap, spool string) string {
	return fmt.Sprintf(`
listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0}
shutdown: {drainTimeout: 10s}
mime: {spoolThreshold: 1KiB, spoolDir: %[6]s}
routes:
  - name: cxf-signed
    path: %[9]s/files
    backend: %[1]s
    kind: egress
    timeouts: {backend: 3m}
    egress:
      sign: {certFile: %[4]s, keyFile: %[5]s}
      response: {policy: partner}
  - name: cxf-encrypted
    path: %[9]s/enc/files
    backend: %[2]s
    kind: egress
    timeouts: {backend: 3m}
    egress:
      sign: {certFile: %[4]s, keyFile: %[5]s}
      encrypt: {partnerCertFile: %[7]s}
      response: {policy: partner}
  - name: cxf-tampered
    path: /tampered%[9]s/files
    backend: %[3]s
    kind: egress
    timeouts: {backend: 3m}
    egress:
      sign: {certFile: %[4]s, keyFile: %[5]s}
      response: {policy: partner}
policies:
  partner:
    require: [signature, timestamp]
    trust: {caFiles: [%[8]s]}
    decryptionKeys: [{certFile: %[4]s, keyFile: %[5]s}]
`, signed, encrypted, tap, p.client.CertFile, p.client.KeyFile, spool, p.server.CertFile, p.ca, prefix)
}

// legacyUpload is the legacy client's plain request: the file inline.
func legacyUpload(ns, name string, data []byte) []byte {
	return plainEnvelope(ns, `<f:upload xmlns:f="`+filesNS+`"><f:name>`+name+`</f:name><f:data>`+
		base64.StdEncoding.EncodeToString(data)+`</f:data></f:upload>`)
}

// TestCXFEgress: a legacy client sends plain SOAP to a wssgw egress route,
// which signs it (and encrypts it for the partner) and calls a real Apache
// CXF 4 service secured by WSS4J interceptors (interop/cxf serve: requires
// Timestamp and a signed Body and Timestamp, an encrypted Body on the
// encrypting endpoint; signs its responses, encrypts them for the
// request's signer). CXF accepts wssgw's requests, a legacy MTOM one signed
// over its XOP infoset included; wssgw verifies CXF's
// responses — an MTOM one with the certificate in a part
// (storeBytesInAttachment), and one encrypted for it — and hands the
// client plaintext, SOAP 1.1 and 1.2. A response changed on the way back
// is refused with the 502 fault before any byte of it reaches the client.
func TestCXFEgress(t *testing.T) {
	jar := testpeer.Jar(t, "cxf")
	p := newPartnerPKI(t)
	file := make([]byte, 48<<10)
	_, err := rand.Read(file)
	require.NoError(t, err)
	sum := sha256.Sum256(file)
	sha := hex.EncodeToString(sum[:])

	// Two JVMs, started together, each serving SOAP 1.1 and 1.2.
	signed := launchCXFService(t, jar, p.cxfPartnerFlags("--soap", "1.1,1.2", "--mtom")...)
	encrypted := startCXFService(t, jar, p.cxfPartnerFlags("--soap", "1.1,1.2", "--path", "/enc/files",
		"--actions", "Timestamp Signature Encrypt")...)
	signed.wait(t)
	base := func(s *cxfService) string { return strings.TrimSuffix(s.URL, "/files") }
	// The tap drops the /tampered in front of the partner's path.
	tap := newWireTap(t, base(signed), func(b []byte) []byte {
		return bytes.Replace(b, []byte("egress-tampered"), []byte("egress-tamperee"), 1)
	})
	for _, v := range []struct{ version, ns, prefix string }{{"1.1", soap.NS11, ""}, {"1.2", soap.NS12, "/soap12"}} {
		t.Run("soap"+v.version, func(t *testing.T) {
			require.Equal(t, base(signed)+v.prefix+"/files", signed.URLs[v.version])
			gw := startGateway(t, p.cxfEgressConfig(v.prefix, base(signed), strings.TrimSuffix(base(encrypted), "/enc"), tap.srv.URL, t.TempDir()))

			call := func(path, name string) (*http.Response, []byte) {
				resp := gw.post(path, contentType(v.version), bytes.NewReader(legacyUpload(v.ns, name, file)))
				return resp, readAll(t, resp)
			}
			plain := func(t *testing.T, resp *http.Response, body []byte, name string) {
				t.Helper()
				require.Equal(t, http.StatusOK, resp.StatusCode, "%.3000s\n%s", body, lastLog(gw))
				assert.NotContains(t, string(body), "Security", "the client gets plaintext")
				assert.NotContains(t, string(body), "EncryptedData")
				assert.Contains(t, string(body), ">"+name+"<", "CXF's receipt")
				assert.Contains(t, string(body), ">"+sha+"<", "CXF received the file byte for byte")
			}

			t.Run("ok/signed, CXF answers MTOM", func(t *testing.T) {
				before := len(signed.served())
				resp, body := call(v.prefix+"/files", "egress-signed")
				plain(t, resp, body, "egress-signed")
				// CXF with MTOM on answers a package: the file in a part,
				// the certificate of its BinarySecurityToken in another,
				// which wssgw consumed while verifying.
				parts := respondParts(t, resp.Header.Get("Content-Type"), body)
				require.Len(t, parts, 2, "root and the file; the certificate part is gone")
				assert.Equal(t, file, parts[1], "the file CXF sent back, byte for byte")
				require.Len(t, signed.served(), before+1)
				assert.Equal(t, sha, signed.served()[before].SHA256)
			})
			t.Run("ok/legacy MTOM request signed over its XOP infoset", func(t *testing.T) {
				before := len(signed.served())
				root := plainEnvelope(v.ns, `<f:upload xmlns:f="`+filesNS+`"><f:name>egress-mtom</f:name><f:data>`+
					fmt.Sprintf(xopInclude, "cid:"+mtomAttCID)+`</f:data></f:upload>`)
				rootType, startInfo := "text/xml", "text/xml"
				if v.version == "1.2" {
					rootType, startInfo = "application/soap+xml", "application/soap+xml"
				}
				pkg := mtomPackage([]mtomPart{
					{mtomRootCID, fmt.Sprintf(`application/xop+xml; charset=UTF-8; type=%q`, rootType), root},
					{mtomAttCID, "application/octet-stream", file},
				})
				ct := fmt.Sprintf(`multipart/related; type="application/xop+xml"; start="<%s>"; start-info=%q; boundary=%q`,
					mtomRootCID, startInfo, mtomBoundary)
				resp := gw.post(v.prefix+"/files", ct, bytes.NewReader(pkg))
				plain(t, resp, readAll(t, resp), "egress-mtom")
				require.Len(t, signed.served(), before+1)
				assert.Equal(t, sha, signed.served()[before].SHA256, "CXF got the attachment byte for byte")
			})
			t.Run("ok/sign-encrypt both ways", func(t *testing.T) {
				before := len(encrypted.served())
				resp, body := call(v.prefix+"/enc/files", "egress-encrypted")
				plain(t, resp, body, "egress-encrypted")
				assert.Contains(t, string(body), base64.StdEncoding.EncodeToString(file[:3000]), "the file CXF sent back, decrypted")
				require.Len(t, encrypted.served(), before+1)
			})
			t.Run("fail/tampered partner response", func(t *testing.T) {
				before := len(signed.served())
				resp, body := call("/tampered"+v.prefix+"/files", "egress-tampered")
				require.Equal(t, http.StatusBadGateway, resp.StatusCode, "%.2000s", body)
				assert.Contains(t, string(body), "could not be verified")
				assert.NotContains(t, string(body), "egress-tampere", "nothing of the unverified response")
				assert.NotContains(t, string(body), sha)
				assert.Len(t, signed.served(), before+1, "CXF did answer: the response was changed on the way")
				require.Eventually(t, func() bool { return len(gw.logs.find("egress: partner response rejected")) > 0 },
					5*time.Second, 20*time.Millisecond)
				l := gw.logs.find("egress: partner response rejected")[0]
				assert.Equal(t, "cxf-tampered", l["route"])
				assert.Equal(t, "digest", l["reason"])
			})
			fams := scrape(t, gw)
			for _, c := range []struct {
				route, result string
				want          float64
			}{
				{"cxf-signed", metrics.EgressVerified, 2}, {"cxf-encrypted", metrics.EgressVerified, 1},
				{"cxf-tampered", metrics.EgressRejected, 1}, {"cxf-signed", metrics.EgressRejected, 0},
			} {
				assert.Equal(t, c.want, value(t, fams, metrics.NameEgressRequests, map[string]string{"route": c.route, "result": c.result}), c.route)
			}
		})
	}
}
