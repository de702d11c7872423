package e2e

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/testpeer"
	"github.com/wssgw/wssgw/internal/testpki"
)

// repoRoot is the repository root, from this package's directory.
var repoRoot = filepath.Join("..", "..")

// zeepPython sets up (or finds cached) the zeep peer's virtualenv.
func zeepPython(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("bash", filepath.Join(repoRoot, "interop", "zeep", "setup.sh")).Output()
	testpeer.Need(t, "zeep venv", err)
	return strings.TrimSpace(string(out))
}

// peerResult is the WSS4J peer's result line for one batch job.
type peerResult struct {
	ID    string `json:"id"`
	OK    bool   `json:"ok"`
	Exit  int    `json:"exit"`
	Error string `json:"error"`
	// ContentType is a signed MIME package's Content-Type (sign --mime-out).
	ContentType string `json:"contentType"`
}

// wss4jBatch runs jobs in one JVM and returns results by id.
func wss4jBatch(t *testing.T, jar string, jobs []testpeer.Job) map[string]peerResult {
	t.Helper()
	cmd := exec.Command("java", "-jar", jar, "batch", "--parallel", fmt.Sprint(runtime.NumCPU()))
	return testpeer.Batch[testpeer.Job, peerResult](t, cmd, jobs)
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

// photo writes size random bytes to a file in the PKI's directory, the
// attachment the MTOM peers send: its bytes, the file, and its SHA-256 in
// hex (what the CXF client reports back for the echoed attachment).
func (p *partnerPKI) photo(t *testing.T, size int) (data []byte, file, sha string) {
	t.Helper()
	data = make([]byte, size)
	_, err := rand.Read(data)
	require.NoError(t, err)
	file = filepath.Join(p.dir, "photo.bin")
	require.NoError(t, os.WriteFile(file, data, 0o600))
	sum := sha256.Sum256(data)
	return data, file, hex.EncodeToString(sum[:])
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
