package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/soap"
	"github.com/wssgw/wssgw/internal/testpeer"
)

// peerMessage is a message a real peer secured, and where it must go.
type peerMessage struct {
	name, route, file, version, payload string
}

func contentType(version string) string {
	if version == "1.2" {
		return "application/soap+xml; charset=utf-8"
	}
	return "text/xml; charset=utf-8"
}

// TestWSS4JProfilesThroughGateway: Apache WSS4J secures requests in every
// profile a CXF partner uses; the running gateway accepts each, forwards
// the exact plaintext payload without the Security header, passes the
// signer identity, and rejects the same message sent again (replay).
func TestWSS4JProfilesThroughGateway(t *testing.T) {
	jar := testpeer.Jar(t, "wss4j")
	pki := newPartnerPKI(t)
	backend := newRecordingBackend(t, []byte("<ok/>"), "text/xml")
	gw := startGateway(t, pki.securedConfig(backend.URL, ""))

	profiles := []struct{ profile, route string }{
		{"sign-bst", "/signed"}, {"sign-issuerserial", "/signed"}, {"sign-ski", "/signed"},
		{"sign-thumbprint", "/signed"}, {"sign-x509", "/signed"}, {"sign-encrypt", "/encrypted"}, {"encrypt-sign", "/encrypted"},
		{"username-digest", "/user"},
	}
	big := map[string]bool{"sign-bst": true, "sign-encrypt": true, "encrypt-sign": true}
	var jobs []testpeer.Job
	var msgs []peerMessage
	for _, p := range profiles {
		for _, v := range []string{"1.1", "1.2"} {
			sizes := []int{1 << 10}
			if big[p.profile] {
				sizes = append(sizes, 1<<20)
			}
			for _, size := range sizes {
				ns := soap.NS11
				if v == "1.2" {
					ns = soap.NS12
				}
				name := fmt.Sprintf("%s/soap%s/%dKiB", p.profile, v, size>>10)
				body := payload(size)
				in := filepath.Join(pki.dir, strings.ReplaceAll(name, "/", "_")+".plain.xml")
				out := strings.TrimSuffix(in, ".plain.xml") + ".xml"
				require.NoError(t, os.WriteFile(in, plainEnvelope(ns, body), 0o600))
				args := []string{"sign", "--profile", p.profile, "--in", in, "--out", out,
					"--key", pki.client.KeyFile, "--cert", pki.client.CertFile,
					"--encrypt-cert", pki.server.CertFile, "--user", pki.clientUser, "--password", pki.pwd}
				jobs = append(jobs, testpeer.Job{ID: name, Args: args})
				msgs = append(msgs, peerMessage{name: name, route: p.route, file: out, version: v, payload: body})
			}
		}
	}
	results := wss4jBatch(t, jar, jobs)
	for _, m := range msgs {
		require.True(t, results[m.name].OK, "WSS4J sign %s: %s", m.name, results[m.name].Error)
	}
	for _, m := range msgs {
		t.Run("ok/"+m.name, func(t *testing.T) {
			msg, err := os.ReadFile(m.file)
			require.NoError(t, err)
			hits := backend.count()
			resp := gw.post(m.route, contentType(m.version), bytes.NewReader(msg))
			body := readAll(t, resp)
			require.Equal(t, http.StatusOK, resp.StatusCode, "%s\n%s", body, lastLog(gw))
			require.Equal(t, hits+1, backend.count())
			fwd, hdr := backend.last()
			assert.Contains(t, string(fwd), m.payload, "the plaintext payload arrives byte for byte")
			assert.NotContains(t, string(fwd), "wsse:Security")
			assert.NotContains(t, string(fwd), "EncryptedData")
			switch m.route {
			case "/signed":
				assert.Contains(t, hdr.Get("X-WSS-Subject"), "CN=client")
				assert.Len(t, hdr.Get("X-WSS-Thumbprint"), 64)
			case "/user":
				assert.Equal(t, pki.clientUser, hdr.Get("X-WSS-Username"))
			}

			// The same message again is a replay: uniform fault, no
			// backend call.
			resp = gw.post(m.route, contentType(m.version), bytes.NewReader(msg))
			requireSecurityFault(t, resp, m.version)
			require.Equal(t, hits+1, backend.count())
		})
	}
}

// requireSecurityFault checks the uniform WS-Security fault.
func requireSecurityFault(t *testing.T, resp *http.Response, version string) {
	t.Helper()
	body := readAll(t, resp)
	require.Equal(t, http.StatusInternalServerError, resp.StatusCode, "%s", body)
	assert.Contains(t, string(body), "InvalidSecurity")
	assert.Contains(t, string(body), "An error was discovered processing the &lt;wsse:Security&gt; header")
	if version == "1.2" {
		assert.Contains(t, resp.Header.Get("Content-Type"), "application/soap+xml")
	}
}

// lastLog returns the gateway's last log line, for failure messages.
func lastLog(g *gateway) string {
	g.logs.mu.Lock()
	defer g.logs.mu.Unlock()
	if len(g.logs.raw) == 0 {
		return ""
	}
	return g.logs.raw[len(g.logs.raw)-1]
}
