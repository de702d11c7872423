package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/testpki"
)

// repoRoot is the repository root, from this package's directory.
var repoRoot = filepath.Join("..", "..")

// needPeer skips a test whose real peer cannot be built here, except in CI,
// where .ci/run installs every peer and a missing one is a failure.
func needPeer(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s unavailable in CI: %v", what, err)
	}
	t.Skipf("%s unavailable: %v", what, err)
}

// wss4jJar builds (or finds cached) the project's WSS4J peer.
func wss4jJar(t *testing.T) string {
	t.Helper()
	_, err := exec.LookPath("java")
	if err == nil {
		_, err = exec.LookPath("mvn")
	}
	needPeer(t, "java/mvn", err)
	out, err := exec.Command("bash", filepath.Join(repoRoot, "interop", "build.sh"), "wss4j").Output()
	needPeer(t, "WSS4J peer build", err)
	return strings.TrimSpace(string(out))
}

// zeepPython sets up (or finds cached) the zeep peer's virtualenv.
func zeepPython(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("bash", filepath.Join(repoRoot, "interop", "zeep", "setup.sh")).Output()
	needPeer(t, "zeep venv", err)
	return strings.TrimSpace(string(out))
}

// peerJob is one WSS4J batch job and its result.
type peerJob struct {
	ID   string   `json:"id"`
	Args []string `json:"args"`
}

type peerResult struct {
	ID    string `json:"id"`
	OK    bool   `json:"ok"`
	Exit  int    `json:"exit"`
	Error string `json:"error"`
	// ContentType is a signed MIME package's Content-Type (sign --mime-out).
	ContentType string `json:"contentType"`
}

// wss4jBatch runs jobs in one JVM and returns results by id.
func wss4jBatch(t *testing.T, jar string, jobs []peerJob) map[string]peerResult {
	t.Helper()
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	for _, j := range jobs {
		require.NoError(t, enc.Encode(j))
	}
	cmd := exec.Command("java", "-jar", jar, "batch", "--parallel", fmt.Sprint(runtime.NumCPU()))
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, _ := cmd.Output()
	res := map[string]peerResult{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var r peerResult
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r), sc.Text())
		res[r.ID] = r
	}
	require.Len(t, res, len(jobs), "batch results; stderr:\n%s", stderr.String())
	return res
}

// partnerPKI is a CA, a partner's signing key and wssgw's decryption key.
type partnerPKI struct {
	dir             string
	ca              string
	client, server  *testpki.Leaf
	users           string
	clientUser, pwd string
}

func newPartnerPKI(t *testing.T) *partnerPKI {
	t.Helper()
	dir := t.TempDir()
	ca := testpki.NewCA(t, "Partner CA")
	p := &partnerPKI{dir: dir, ca: ca.WriteCert(t, dir), clientUser: "alice", pwd: "s3cret-pw"}
	p.client = ca.IssueRSA(t, dir, "client")
	p.server = ca.IssueRSA(t, dir, "server")
	p.users = filepath.Join(dir, "users.txt")
	require.NoError(t, os.WriteFile(p.users, []byte(p.clientUser+":"+p.pwd+"\n"), 0o600))
	return p
}

// securedConfig is a gateway with three secured routes in front of backend:
// /signed (signature and timestamp), /encrypted (plus Body encryption) and
// /user (UsernameToken digest), all with identity headers.
func (p *partnerPKI) securedConfig(backend, replay string) string {
	return fmt.Sprintf(`
listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0}
shutdown: {drainTimeout: 10s}
%[5]s
routes:
  - {name: signed, path: /signed, backend: %[1]s, policy: signed, maxBodyBytes: 4MiB,
     identityHeaders: {subject: X-WSS-Subject, thumbprint: X-WSS-Thumbprint, username: X-WSS-Username}}
  - {name: encrypted, path: /encrypted, backend: %[1]s, policy: encrypted, maxBodyBytes: 4MiB}
  - {name: user, path: /user, backend: %[1]s, policy: user,
     identityHeaders: {username: X-WSS-Username}}
policies:
  signed:
    require: [signature, timestamp]
    trust: {caFiles: [%[2]s], knownCertFiles: [%[3]s]}
    decryptionKeys: [{certFile: %[4]s, keyFile: %[6]s}]
  encrypted:
    require: [signature, encryption, timestamp]
    encryptedParts: [Body]
    trust: {caFiles: [%[2]s]}
    decryptionKeys: [{certFile: %[4]s, keyFile: %[6]s}]
  user:
    require: [usernameToken, timestamp]
    usernameToken: {credentialsFile: %[7]s}
`, backend, p.ca, p.client.CertFile, p.server.CertFile, replay, p.server.KeyFile, p.users)
}

// payload is a SOAP body payload of about size bytes whose bytes survive
// any DOM serializer unchanged, so forwarded plaintext can be compared.
func payload(size int) string {
	var b strings.Builder
	b.WriteString(`<ord:PlaceOrder xmlns:ord="urn:example:orders">`)
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, `<ord:line n="%d"><ord:sku>SKU-%06d</ord:sku><ord:qty>%d</ord:qty></ord:line>`, i, i*7919%1000000, i%9+1)
	}
	b.WriteString(`</ord:PlaceOrder>`)
	return b.String()
}

func plainEnvelope(ns, body string) []byte {
	return []byte(`<?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope xmlns:soapenv="` + ns + `"><soapenv:Header/><soapenv:Body>` + body + `</soapenv:Body></soapenv:Envelope>`)
}
