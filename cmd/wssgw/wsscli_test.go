package main

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/testpki"
	"github.com/wssgw/wssgw/internal/testvectors"
)

// cliEnvelope is the plain request the tests secure.
const cliEnvelope = `<?xml version="1.0" encoding="UTF-8"?>
<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/">
  <soap:Header></soap:Header>
  <soap:Body>
    <ord:PlaceOrder xmlns:ord="urn:wssgw:demo:orders">
      <ord:customer>ACME-4711</ord:customer>
      <ord:item sku="BOLT-M8" quantity="500"/>
    </ord:PlaceOrder>
  </soap:Body>
</soap:Envelope>
`

// cliConfig has three policies over one test CA: signed (signature and
// timestamp), encrypted (also encryption of the Body) and open (nothing).
const cliConfig = `routes:
  - {name: a, path: /a, backend: "http://127.0.0.1:1", policy: signed}
  - {name: b, path: /b, backend: "http://127.0.0.1:1", policy: encrypted}
policies:
  signed:
    require: [signature, timestamp]
    trust: {caFiles: [ca.crt]}
    decryptionKeys: [{certFile: gateway.crt, keyFile: gateway.key}]
    replay: "on"
  encrypted:
    require: [signature, timestamp, encryption]
    encryptedParts: [Body]
    trust: {caFiles: [ca.crt]}
    decryptionKeys: [{certFile: gateway.crt, keyFile: gateway.key}]
  open:
    require: []
`

// cliPKI is a throw-away PKI in a temp directory with the config above.
type cliPKI struct {
	dir                    string
	config                 string
	partnerKey, partnerCrt string
	rogueKey, rogueCrt     string
	gatewayCrt             string
}

func newCLIPKI(t *testing.T) *cliPKI {
	t.Helper()
	dir := t.TempDir()
	ca := testpki.NewCA(t, "wsscli test CA")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ca.crt"), ca.CertPEM, 0o600))
	partner := ca.Issue(t, dir, "partner")
	rogue := testpki.NewCA(t, "rogue CA").Issue(t, dir, "rogue")
	issueRSA(t, ca, dir, "gateway")
	cfg := filepath.Join(dir, "wssgw.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(cliConfig), 0o600))
	return &cliPKI{
		dir: dir, config: cfg,
		partnerKey: partner.KeyFile, partnerCrt: partner.CertFile,
		rogueKey: rogue.KeyFile, rogueCrt: rogue.CertFile,
		gatewayCrt: filepath.Join(dir, "gateway.crt"),
	}
}

// issueRSA issues an RSA key pair (encryption needs RSA key transport;
// testpki makes ECDSA keys) and writes name.crt and name.key to dir.
func issueRSA(t *testing.T, ca *testpki.CA, dir, name string) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageKeyEncipherment | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.Key)
	require.NoError(t, err)
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".key"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600))
}

// runCLI runs the wssgw root command in process.
func runCLI(t *testing.T, stdin []byte, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	root := newRootCmd()
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetIn(bytes.NewReader(stdin))
	root.SetArgs(args)
	err = root.Execute()
	return out.String(), errb.String(), err
}

// sign secures cliEnvelope (from stdin) and returns the message.
func (p *cliPKI) sign(t *testing.T, policy, key, crt string, extra ...string) []byte {
	t.Helper()
	args := append([]string{"sign", "--config", p.config, "--policy", policy, "--key", key, "--cert", crt}, extra...)
	out, stderr, err := runCLI(t, []byte(cliEnvelope), append(args, "-")...)
	require.NoError(t, err, stderr)
	return []byte(out)
}

func (p *cliPKI) write(t *testing.T, name string, data []byte) string {
	t.Helper()
	f := filepath.Join(p.dir, name)
	require.NoError(t, os.WriteFile(f, data, 0o600))
	return f
}

var bodyContent = regexp.MustCompile(`(?s)<soap:Body[^>]*>(.*)</soap:Body>`)

// innerBody returns the content of the soap:Body of a message.
func innerBody(t *testing.T, msg []byte) string {
	t.Helper()
	m := bodyContent.FindSubmatch(msg)
	require.NotNil(t, m, "no soap:Body in %s", msg)
	return string(m[1])
}

func TestSignVerify(t *testing.T) {
	p := newCLIPKI(t)
	signed := p.sign(t, "signed", p.partnerKey, p.partnerCrt)
	encrypted := p.sign(t, "signed", p.partnerKey, p.partnerCrt, "--encrypt-for", p.gatewayCrt)
	rogue := p.sign(t, "signed", p.rogueKey, p.rogueCrt)
	later := time.Now().Add(2 * time.Hour).UTC().Format(time.RFC3339)

	tests := map[string]struct {
		msg    []byte
		args   []string
		reason string // "" when the message must verify
		check  func(t *testing.T, stdout string)
	}{
		"ok/signed": {msg: signed, args: []string{"--policy", "signed"}, check: func(t *testing.T, out string) {
			assert.Regexp(t, `(?m)^verified +yes, policy signed$`, out)
			assert.Regexp(t, `(?m)^  subject +CN=partner$`, out)
			assert.Regexp(t, `(?m)^  issuer +CN=wsscli test CA$`, out)
			assert.Regexp(t, `(?m)^  covers +Body, Timestamp$`, out)
			assert.Regexp(t, `(?m)^  key reference +bst$`, out)
			assert.Regexp(t, `(?m)^soap +1\.1$`, out)
			assert.NotContains(t, out, "decrypted")
			// The plaintext follows the facts, without the Security header.
			assert.Contains(t, out, "<ord:customer>ACME-4711</ord:customer>")
			assert.NotContains(t, out, "wsse:Security")
		}},
		"ok/encrypted": {msg: encrypted, args: []string{"--policy", "encrypted"}, check: func(t *testing.T, out string) {
			assert.Regexp(t, `(?m)^decrypted 1 +Body \(content\)$`, out)
			assert.Regexp(t, `(?m)^  algorithm +aes256-gcm `, out)
			assert.Regexp(t, `(?m)^  key transport +rsa-oaep-mgf1p `, out)
		}},
		"ok/open-policy-forwards-plain": {msg: []byte(cliEnvelope), args: []string{"--policy", "open"}, check: func(t *testing.T, out string) {
			assert.Contains(t, out, "forwarded as received")
			assert.Contains(t, out, cliEnvelope)
		}},
		"ok/unsigned-header-not-forwarded": {msg: bytes.Replace(signed, []byte("</soap:Header>"), []byte(`<x:Admin xmlns:x="urn:x">true<!--c--></x:Admin></soap:Header>`), 1),
			args: []string{"--policy", "signed"}, check: func(t *testing.T, out string) {
				assert.Regexp(t, `(?m)^not forwarded +header \{urn:x\}Admin \(no trusted signature covers it\)$`, out)
				assert.NotContains(t, out, "x:Admin")
			}},
		"fail/digest":             {msg: bytes.Replace(signed, []byte("ACME-4711"), []byte("ACME-4712"), 1), args: []string{"--policy", "signed"}, reason: "digest"},
		"fail/timestamp":          {msg: signed, args: []string{"--policy", "signed", "--now", later}, reason: "timestamp"},
		"fail/missing-encryption": {msg: signed, args: []string{"--policy", "encrypted"}, reason: "missing"},
		"fail/untrusted":          {msg: rogue, args: []string{"--policy", "signed"}, reason: "untrusted"},
		"fail/not-soap":           {msg: []byte("<a/>"), args: []string{"--policy", "signed"}, reason: "structure"},
		// What the open policy forwards unparsed is gated, as in the gateway.
		"fail/open-policy-doctype": {msg: []byte(`<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>` + cliEnvelope[strings.Index(cliEnvelope, "<soap:"):]),
			args: []string{"--policy", "open"}, reason: "malformed"},
		"fail/open-policy-text-in-envelope": {msg: []byte(strings.Replace(cliEnvelope, "<soap:Body>", "admin<soap:Body>", 1)),
			args: []string{"--policy", "open"}, reason: "malformed"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := p.write(t, strings.ReplaceAll(name, "/", "_")+".xml", tc.msg)
			out, stderr, err := runCLI(t, nil, append([]string{"verify", "--config", p.config, f}, tc.args...)...)
			if tc.reason != "" {
				require.ErrorIs(t, err, exitError{})
				assert.Regexp(t, `^rejected: `+tc.reason+`: \S`, stderr)
				assert.Empty(t, out, "nothing is forwarded")
				return
			}
			require.NoError(t, err, stderr)
			tc.check(t, out)
		})
	}
}

func TestVerifyPlaintextFile(t *testing.T) {
	p := newCLIPKI(t)
	// The policy requires encryption: sign defaults --encrypt-for to its
	// first decryption key and says so.
	args := []string{"sign", "--config", p.config, "--policy", "encrypted", "--key", p.partnerKey, "--cert", p.partnerCrt, "-"}
	msg, stderr, err := runCLI(t, []byte(cliEnvelope), args...)
	require.NoError(t, err, stderr)
	assert.Contains(t, stderr, "requires encryption: encrypting for CN=gateway")
	assert.NotContains(t, msg, "ACME-4711", "the Body content is encrypted")
	assert.Contains(t, msg, "EncryptedData")

	plain := filepath.Join(p.dir, "plain.xml")
	out, stderr, err := runCLI(t, []byte(msg), "verify", "-c", p.config, "--policy", "encrypted", "--plaintext", plain, "-")
	require.NoError(t, err, stderr)
	assert.Regexp(t, `(?m)^plaintext +\d+ bytes written to `, out)
	assert.NotContains(t, out, "ACME-4711", "the plaintext goes to the file only")
	got, err := os.ReadFile(plain)
	require.NoError(t, err)
	assert.Equal(t, innerBody(t, []byte(cliEnvelope)), innerBody(t, got))
	assert.NotContains(t, string(got), "Security")
}

func TestVerifyJSON(t *testing.T) {
	p := newCLIPKI(t)
	msg := p.write(t, "m.xml", p.sign(t, "signed", p.partnerKey, p.partnerCrt, "--encrypt-for", p.gatewayCrt, "--key-reference", "bst"))
	tests := map[string]struct {
		args  []string
		check func(t *testing.T, rep *verifyReport, err error)
	}{
		"ok/facts": {args: []string{"--policy", "encrypted"}, check: func(t *testing.T, rep *verifyReport, err error) {
			require.NoError(t, err)
			assert.True(t, rep.Verified)
			assert.Equal(t, "1.1", rep.SOAPVersion)
			require.Len(t, rep.Signatures, 1)
			s := rep.Signatures[0]
			require.NotNil(t, s.Signer)
			assert.Equal(t, "CN=partner", s.Signer.Subject)
			assert.Len(t, s.Signer.SHA256, 64)
			assert.Equal(t, "bst", s.KeyReference)
			assert.Equal(t, []string{"Body", "Timestamp"}, s.Covers)
			require.Len(t, rep.Decrypted, 1)
			assert.Equal(t, "Body", rep.Decrypted[0].Part)
			require.NotNil(t, rep.Timestamp)
			require.NotNil(t, rep.Timestamp.Expires)
			assert.Equal(t, 5*time.Minute, rep.Timestamp.Expires.Sub(rep.Timestamp.Created))
			assert.Equal(t, innerBody(t, []byte(cliEnvelope)), innerBody(t, []byte(rep.Plaintext)))
			assert.Equal(t, len(rep.Plaintext), rep.PlaintextBytes)
		}},
		"fail/rejected-is-json-too": {args: []string{"--policy", "encrypted", "--now", "2000-01-01T00:00:00Z"}, check: func(t *testing.T, rep *verifyReport, err error) {
			require.ErrorIs(t, err, exitError{})
			assert.False(t, rep.Verified)
			assert.Equal(t, "timestamp", rep.Reason)
			assert.NotEmpty(t, rep.Detail)
			assert.Empty(t, rep.Signatures)
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			out, _, err := runCLI(t, nil, append([]string{"verify", "-c", p.config, "--json", msg}, tc.args...)...)
			var rep verifyReport
			dec := json.NewDecoder(strings.NewReader(out))
			dec.DisallowUnknownFields()
			require.NoError(t, dec.Decode(&rep), out)
			assert.False(t, dec.More(), "one JSON object")
			tc.check(t, &rep, err)
		})
	}
}

func TestSignOptions(t *testing.T) {
	p := newCLIPKI(t)
	base := []string{"sign", "--config", p.config}
	keys := []string{"--key", p.partnerKey, "--cert", p.partnerCrt}
	tests := map[string]struct {
		args    []string
		wantErr string
		check   func(t *testing.T, p *cliPKI, out, stderr string)
	}{
		"ok/out-file-and-key-reference": {args: append(append([]string{"--policy", "signed", "--key-reference", "issuer-serial", "--out", "OUT"}, keys...), "IN"),
			check: func(t *testing.T, p *cliPKI, out, stderr string) {
				assert.Empty(t, out)
				// The policy has no knownCertFiles: the gateway could not
				// resolve the reference, which sign points out.
				assert.Contains(t, stderr, "cannot resolve the reference")
				data, err := os.ReadFile(filepath.Join(p.dir, "out.xml"))
				require.NoError(t, err)
				assert.Contains(t, string(data), "X509IssuerSerial")
				assert.NotContains(t, string(data), "BinarySecurityToken")
			}},
		"ok/untrusted-signer-is-a-note": {args: append([]string{"--policy", "signed", "--key", p.rogueKey, "--cert", p.rogueCrt}, "IN"),
			check: func(t *testing.T, _ *cliPKI, out, stderr string) {
				assert.Contains(t, out, "ds:SignatureValue")
				assert.Contains(t, stderr, "does not trust the signing certificate")
			}},
		"fail/policy-required-with-several": {args: nil, wantErr: "--policy is required"},
		"fail/no-key":                       {args: []string{"--policy", "signed", "--cert", p.partnerCrt, "IN"}, wantErr: `"key" not set`},
		"fail/ttl-zero-but-timestamp-required": {args: append(append([]string{"--policy", "signed", "--ttl", "0"}, keys...), "IN"),
			wantErr: "requires a Timestamp"},
		"fail/unknown-policy": {args: append(append([]string{"--policy", "nope"}, keys...), "IN"), wantErr: "no such policy"},
		"fail/unknown-key-reference": {args: append(append([]string{"--policy", "signed", "--key-reference", "x509"}, keys...), "IN"),
			wantErr: "key reference"},
		"fail/encrypt-for-ecdsa": {args: append(append([]string{"--policy", "signed", "--encrypt-for", p.partnerCrt}, keys...), "IN"),
			wantErr: "needs an RSA certificate"},
	}
	in := p.write(t, "in.xml", []byte(cliEnvelope))
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			args := append([]string{}, base...)
			for _, a := range tc.args {
				switch a {
				case "IN":
					a = in
				case "OUT":
					a = filepath.Join(p.dir, "out.xml")
				}
				args = append(args, a)
			}
			if tc.args == nil {
				args = append(append(args, keys...), in)
			}
			out, stderr, err := runCLI(t, nil, args...)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err, stderr)
			tc.check(t, p, out, stderr)
		})
	}
}

// TestVerifyWSS4JVector verifies a message made by Apache WSS4J.
func TestVerifyWSS4JVector(t *testing.T) {
	vector := testvectors.Path(t, "wss4j/sign-bst/0000.xml")
	msg, err := os.ReadFile(vector)
	require.NoError(t, err)
	ca, err := filepath.Abs(testvectors.Path(t, "wss4j/keys/ca.crt"))
	require.NoError(t, err)
	cfg := filepath.Join(t.TempDir(), "wssgw.yaml")
	body := "routes:\n  - {name: a, path: /a, backend: \"http://127.0.0.1:1\", policy: wss4j}\n" +
		"policies:\n  wss4j:\n    trust: {caFiles: [\"" + filepath.ToSlash(ca) + "\"]}\n"
	require.NoError(t, os.WriteFile(cfg, []byte(body), 0o600))
	m := regexp.MustCompile(`Created>([^<]+)<`).FindSubmatch(msg)
	require.NotNil(t, m)
	created, err := time.Parse(time.RFC3339Nano, string(m[1]))
	require.NoError(t, err)

	tests := map[string]struct {
		now    time.Time
		reason string
	}{
		"ok/created+1s":   {now: created.Add(time.Second)},
		"fail/created+1h": {now: created.Add(time.Hour), reason: "timestamp"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			out, stderr, err := runCLI(t, nil, "verify", "-c", cfg, "--now", tc.now.Format(time.RFC3339Nano), vector)
			if tc.reason != "" {
				require.ErrorIs(t, err, exitError{})
				assert.Regexp(t, `^rejected: `+tc.reason+`: `, stderr)
				return
			}
			require.NoError(t, err, stderr)
			assert.Regexp(t, `(?m)^  subject +.*CN=client`, out)
			assert.Regexp(t, `(?m)^  covers +.*Body`, out)
			assert.Regexp(t, `(?m)^  key reference +bst$`, out)
		})
	}
}

// TestClientConfigWithoutRoutes: sign and verify take a configuration with
// policies and no routes (a partner's or an operator's client config),
// which serve and validate still refuse; its other problems still count.
func TestClientConfigWithoutRoutes(t *testing.T) {
	p := newCLIPKI(t)
	client := p.write(t, "client.yaml", []byte(`policies:
  partner:
    require: [signature, timestamp]
    trust: {caFiles: [ca.crt]}
`))
	msg := p.sign(t, "", p.partnerKey, p.partnerCrt, "--config", client) // the later --config wins
	in := p.write(t, "signed.xml", msg)
	out, stderr, err := runCLI(t, nil, "verify", "--config", client, in)
	require.NoError(t, err, stderr)
	assert.Contains(t, out, "partner")

	_, _, err = runCLI(t, nil, "validate", "--config", client)
	require.Error(t, err, "the gateway still needs a route")

	typo := p.write(t, "typo.yaml", []byte("policies:\n  partner:\n    trust: {caFile: [ca.crt]}\n"))
	_, _, err = runCLI(t, nil, "verify", "--config", typo, in)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "caFile")
}

// TestExampleClientConfig: examples/client.yaml does what docs/operations.md
// says: partner-b (caFiles + knownCertFiles) resolves every key reference,
// partner-a (caFiles only) only a BinarySecurityToken.
func TestExampleClientConfig(t *testing.T) {
	const cfg = "../../examples/client.yaml"
	dir := t.TempDir()
	for _, ref := range []string{"bst", "issuer-serial", "ski", "thumbprint"} {
		t.Run("ok/"+ref, func(t *testing.T) {
			msg, stderr, err := runCLI(t, nil, "sign", "-c", cfg, "--policy", "partner-b",
				"--key", "../../examples/keys/partner.key", "--cert", "../../examples/keys/partner.crt",
				"--key-reference", ref, "-o", filepath.Join(dir, ref+".xml"), "../../examples/orders-soap11.xml")
			require.NoError(t, err, stderr+msg)
			_, stderr, err = runCLI(t, nil, "verify", "-c", cfg, "--policy", "partner-b", filepath.Join(dir, ref+".xml"))
			require.NoError(t, err, stderr)
			_, stderr, err = runCLI(t, nil, "verify", "-c", cfg, "--policy", "partner-a", filepath.Join(dir, ref+".xml"))
			if ref == "bst" {
				require.NoError(t, err, stderr)
				return
			}
			require.Error(t, err)
			assert.Contains(t, stderr, "rejected: token: certificate not found")
		})
	}
}
