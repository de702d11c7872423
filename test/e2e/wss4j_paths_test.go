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
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/soap"
	"github.com/wssgw/wssgw/internal/testpeer"
	"github.com/wssgw/wssgw/internal/testpki"
)

// accountHeader is the custom SOAP header block the header cases sign and
// encrypt (WSS4J wraps its EncryptedData in a wsse11:EncryptedHeader).
const (
	accountNS     = "urn:example:hdr"
	accountQName  = "{" + accountNS + "}Account"
	accountHeader = `<hdr:Account xmlns:hdr="` + accountNS + `">acct-42</hdr:Account>`
)

// pathsPKI is partnerPKI plus a partner whose certificate an intermediate
// CA issued; wssgw trusts only the root.
type pathsPKI struct {
	*partnerPKI
	ca2     string        // the root above the intermediate
	inter   string        // the intermediate CA certificate file
	partner *testpki.Leaf // issued by the intermediate
}

func newPathsPKI(t *testing.T) *pathsPKI {
	t.Helper()
	p := &pathsPKI{partnerPKI: newPartnerPKI(t)}
	// A second root, trusted by every policy below, with an intermediate
	// that only the partner's messages carry.
	root := testpki.NewCA(t, "Paths Root")
	inter := root.Intermediate(t, "Paths Intermediate")
	dir := filepath.Join(p.dir, "paths")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	p.inter = filepath.Join(dir, "intermediate.crt")
	require.NoError(t, os.WriteFile(p.inter, inter.CertPEM, 0o600))
	p.partner = inter.IssueRSA(t, dir, "partner")
	p.ca2 = root.WriteCert(t, dir)
	return p
}

// pathsConfig is a gateway with one route per policy, each route named
// like its policy, all passing the identity headers.
func (p *pathsPKI) pathsConfig(backend string) string {
	route := func(name string) string {
		return fmt.Sprintf("  - {name: %[1]s, path: /%[1]s, backend: %[2]s, policy: %[1]s, maxBodyBytes: 4MiB,\n"+
			"     identityHeaders: {subject: X-WSS-Subject, thumbprint: X-WSS-Thumbprint, username: X-WSS-Username}}\n", name, backend)
	}
	trust := fmt.Sprintf("{caFiles: [%s, %s]}", p.ca, p.ca2)
	keys := fmt.Sprintf("[{certFile: %s, keyFile: %s}]", p.server.CertFile, p.server.KeyFile)
	var b strings.Builder
	// The DOM engine's paths are under test: every message, the replays
	// included, takes it. (With the template automaton on, a replayed
	// message of a learned shape takes the template path instead.)
	b.WriteString("listen: 127.0.0.1:0\nadmin: {listen: 127.0.0.1:0}\nshutdown: {drainTimeout: 10s}\nroutes:\n")
	for _, n := range pathPolicies {
		b.WriteString(route(n))
	}
	fmt.Fprintf(&b, `policies:
  signed:
    require: [signature, timestamp]
    trust: %[1]s
    decryptionKeys: %[2]s
  token:
    require: [signature, timestamp]
    signedParts: [Body, Timestamp, BinarySecurityToken]
    trust: %[1]s
  encrypted:
    require: [signature, encryption, timestamp]
    encryptedParts: [Body]
    trust: %[1]s
    decryptionKeys: %[2]s
  header:
    require: [signature, encryption, timestamp]
    signedParts: [Body, Timestamp, %[3]q]
    encryptedParts: [Body, %[3]q]
    trust: %[1]s
    decryptionKeys: %[2]s
  symmetric:
    require: [encryption, timestamp]
    encryptedParts: [Body]
    decryptionKeys: %[2]s
  symuser:
    require: [usernameToken, encryption, timestamp]
    encryptedParts: [Body]
    decryptionKeys: %[2]s
    usernameToken: {credentialsFile: %[4]s}
  sha1:
    require: [signature, encryption, timestamp]
    trust: %[1]s
    decryptionKeys: %[2]s
    algorithms: {legacy: {sha1: true}}
  cbc:
    require: [signature, encryption, timestamp]
    trust: %[1]s
    decryptionKeys: %[2]s
    algorithms: {legacy: {cbc: true}}
  rsa15:
    require: [signature, encryption, timestamp]
    trust: %[1]s
    decryptionKeys: %[2]s
    algorithms: {legacy: {rsa15: true}}
  user:
    require: [usernameToken, timestamp]
    usernameToken: {credentialsFile: %[4]s}
  text:
    require: [usernameToken, timestamp]
    usernameToken: {credentialsFile: %[4]s, allowPasswordText: true}
`, trust, keys, accountQName, p.users)
	return b.String()
}

// pathPolicies are the routes (and policies) of pathsConfig.
var pathPolicies = []string{"signed", "token", "encrypted", "header", "symmetric", "symuser", "sha1", "cbc", "rsa15", "user", "text"}

// pathSend is one request of a case: the message (mutated or not) to a
// route, and the reason it must be rejected with ("" = accepted; "a|b" =
// either).
type pathSend struct {
	route  string
	reason string
	// mutate, when set, changes the message first (a tampered copy).
	mutate func(t *testing.T, msg []byte) []byte
	what   string
}

// pathCase is one WSS4J message and what the gateway must do with it.
type pathCase struct {
	name    string
	args    []string // sign arguments after --in/--out
	version string
	header  bool // the plain envelope carries accountHeader
	// unsignedHeader: no trusted X.509 signature covers accountHeader, so
	// the policy's default unsignedHeaders (strip) leaves it out.
	unsignedHeader bool
	// subject and username are the identity headers an accepted request
	// must carry ("" = absent).
	subject, username string
	sends             []pathSend
}

// accept is the send that must pass; rejections go before it (a rejected
// message is not recorded for replay, an accepted one is).
func accept(route string) pathSend { return pathSend{route: route, what: "accepted"} }

func reject(route, reason, what string) pathSend {
	return pathSend{route: route, reason: reason, what: what}
}

func tampered(route, reason, what string, mutate func(*testing.T, []byte) []byte) pathSend {
	return pathSend{route: route, reason: reason, what: what, mutate: mutate}
}

// TestWSS4JPathsThroughGateway: Apache WSS4J secures requests that take
// the DOM engine's less common paths — PKIPath tokens (with an
// intermediate CA), the symmetric binding (HMAC-SHA256 keyed by an
// EncryptedKey, by direct reference and by EncryptedKeySHA1),
// wsse11:EncryptedHeader, STR-Transform references, xenc11 rsa-oaep with
// an explicit MGF, the legacy algorithms and UsernameToken PasswordText —
// and the running gateway accepts each where the policy allows it,
// forwarding the exact payload, and rejects it with the uniform fault and
// the logged and counted reason where it does not, or where the message
// was tampered with.
func TestWSS4JPathsThroughGateway(t *testing.T) {
	jar := testpeer.Jar(t, "wss4j")
	pki := newPathsPKI(t)
	backend := newRecordingBackend(t, []byte("<ok/>"), "text/xml")
	gw := startGateway(t, pki.pathsConfig(backend.URL))

	client := []string{"--key", pki.client.KeyFile, "--cert", pki.client.CertFile}
	partner := []string{"--key", pki.partner.KeyFile, "--cert", pki.partner.CertFile}
	enc := []string{"--encrypt-cert", pki.server.CertFile}
	user := func(pw string) []string { return []string{"--user", pki.clientUser, "--password", pw} }
	with := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	hdr := []string{"--sign-header", accountQName, "--encrypt-header", accountQName}

	cases := []pathCase{
		// The partner with an X509v3 token: the intermediate is neither in
		// the message nor in the trust configuration. (First: once a
		// PKIPath message proved the partner's chain, the trust store's
		// per-certificate cache trusts the leaf for the chain's validity.)
		{name: "bst/intermediate-missing", args: with([]string{"--profile", "sign-bst"}, partner),
			sends: []pathSend{reject("signed", "untrusted", "no path to the root")}},
		// a. X509PKIPathv1 BinarySecurityToken (X.509 Token Profile 1.1
		// §3.1): the chain travels in the message, the root is the only
		// anchor.
		{name: "pkipath/single", args: with([]string{"--profile", "sign-bst", "--pkipath"}, client),
			subject: "CN=client", sends: []pathSend{
				tampered("signed", "digest", "payload changed", replaceFirst("SKU-000000", "SKU-999999")),
				accept("signed")}},
		{name: "pkipath/intermediate", args: with([]string{"--profile", "sign-bst", "--pkipath", "--chain", pki.inter}, partner),
			subject: "CN=partner", sends: []pathSend{accept("signed")}},
		{name: "pkipath/intermediate/soap1.2", version: "1.2", args: with([]string{"--profile", "sign-bst", "--pkipath", "--chain", pki.inter}, partner),
			subject: "CN=partner", sends: []pathSend{accept("signed")}},

		// b, e. The symmetric binding: the HMAC key comes from an
		// EncryptedKey wssgw unwrapped with its own key, so anyone can make
		// one; it proves nothing about the sender (see check.go).
		{name: "symmetric/reference", args: with([]string{"--profile", "symmetric"}, enc), sends: []pathSend{
			reject("signed", "policy", "an HMAC signature is no trusted signer"),
			reject("encrypted", "policy", "an HMAC signature is no trusted signer"),
			tampered("symmetric", "signature", "SignatureValue changed", tamperElement("SignatureValue")),
			tampered("symmetric", "decrypt", "Body ciphertext changed", tamperCipherAfter(":Body ")),
			tampered("symmetric", "decrypt", "EncryptedKey changed", tamperCipherAfter(":EncryptedKey ")),
			accept("symmetric")}},
		{name: "symmetric/reference/soap1.2", version: "1.2", args: with([]string{"--profile", "symmetric"}, enc),
			sends: []pathSend{accept("symmetric")}},
		{name: "symmetric/encryptedkeysha1", args: with([]string{"--profile", "symmetric-sha1"}, enc), sends: []pathSend{
			tampered("symmetric", "token", "EncryptedKeySHA1 names another key", tamperKeyIdentifier),
			reject("signed", "policy", "an HMAC signature is no trusted signer"),
			accept("symmetric")}},
		{name: "symmetric/usernametoken", args: with([]string{"--profile", "symmetric", "--username-token", "digest"}, enc, user(pki.pwd)),
			username: pki.clientUser, sends: []pathSend{accept("symuser")}},
		{name: "symmetric/usernametoken-wrong-password", args: with([]string{"--profile", "symmetric", "--username-token", "digest"}, enc, user("not-"+pki.pwd)),
			sends: []pathSend{reject("symuser", "authentication", "wrong password")}},
		{name: "symmetric/x509-signature", args: with([]string{"--profile", "symmetric", "--x509-signature"}, enc, client),
			subject: "CN=client", sends: []pathSend{accept("encrypted")}},

		// c. wsse11:EncryptedHeader (WSS 1.1 §9.3), signed and encrypted.
		{name: "encryptedheader", header: true, args: with([]string{"--profile", "sign-encrypt"}, client, enc, hdr),
			subject: "CN=client", sends: []pathSend{
				tampered("header", "decrypt", "header ciphertext changed", tamperCipherAfter(":EncryptedHeader ")),
				accept("header")}},
		{name: "encryptedheader/soap1.2", version: "1.2", header: true, args: with([]string{"--profile", "sign-encrypt"}, client, enc, hdr),
			subject: "CN=client", sends: []pathSend{accept("header")}},
		// Encrypted and covered by an HMAC signature only: unsigned.
		{name: "encryptedheader/symmetric", header: true, unsignedHeader: true, args: with([]string{"--profile", "symmetric", "--encrypt-header", accountQName}, enc),
			sends: []pathSend{accept("symmetric")}},
		{name: "header-not-encrypted", header: true, args: with([]string{"--profile", "sign-encrypt", "--sign-header", accountQName}, client, enc),
			sends: []pathSend{reject("header", "policy", "the header arrived in clear")}},

		// d. STR-Transform (WSS 1.1 §8.3): the signature covers the token.
		{name: "strtransform", args: with([]string{"--profile", "sign-bst", "--str-transform"}, client),
			subject: "CN=client", sends: []pathSend{
				tampered("token", "digest", "token re-encoded", tamperBSTWhitespace),
				accept("token")}},
		{name: "strtransform-absent", args: with([]string{"--profile", "sign-bst"}, client),
			sends: []pathSend{reject("token", "policy", "the token is not signed")}},

		// f. xenc11 rsa-oaep with explicit DigestMethod and MGF.
		{name: "oaep/sha256-mgf1sha256", args: with([]string{"--profile", "sign-encrypt", "--key-transport", "rsa-oaep",
			"--oaep-digest", "sha256", "--mgf", "mgf1sha256"}, client, enc),
			subject: "CN=client", sends: []pathSend{
				tampered("encrypted", "decrypt", "EncryptedKey changed", tamperCipherAfter(":EncryptedKey ")),
				accept("encrypted")}},
		{name: "oaep/sha512-mgf1sha512", args: with([]string{"--profile", "encrypt-sign", "--key-transport", "rsa-oaep",
			"--oaep-digest", "sha512", "--mgf", "mgf1sha512"}, client, enc),
			subject: "CN=client", sends: []pathSend{accept("encrypted")}},
		{name: "oaep/symmetric-sha256-mgf1sha256", args: with([]string{"--profile", "symmetric", "--key-transport", "rsa-oaep",
			"--oaep-digest", "sha256", "--mgf", "mgf1sha256"}, enc),
			sends: []pathSend{accept("symmetric")}},

		// g. Legacy algorithms: only the policy that opts in to the one
		// used accepts.
		{name: "legacy/rsa-sha1", args: with([]string{"--profile", "sign-encrypt", "--signature-algorithm", "rsa-sha1",
			"--digest-algorithm", "sha1"}, client, enc),
			subject: "CN=client", sends: []pathSend{
				reject("encrypted", "algorithm", "no opt-in"),
				reject("cbc", "algorithm", "another opt-in"),
				accept("sha1")}},
		{name: "legacy/aes-cbc", args: with([]string{"--profile", "sign-encrypt", "--symmetric-algorithm", "aes256-cbc"}, client, enc),
			subject: "CN=client", sends: []pathSend{
				reject("encrypted", "algorithm", "no opt-in"),
				reject("sha1", "algorithm", "another opt-in"),
				// CBC has no integrity: the flipped block decrypts to
				// garbage that the gate rejects when it re-reads the
				// plaintext. The fault is the same either way.
				tampered("cbc", "malformed|decrypt", "ciphertext changed", tamperCipherAfter(":Body ")),
				accept("cbc")}},
		{name: "legacy/aes128-cbc", args: with([]string{"--profile", "encrypt-sign", "--symmetric-algorithm", "aes128-cbc"}, client, enc),
			subject: "CN=client", sends: []pathSend{
				reject("encrypted", "algorithm", "no opt-in"),
				accept("cbc")}},
		{name: "legacy/rsa-1_5", args: with([]string{"--profile", "sign-encrypt", "--key-transport", "rsa-1_5"}, client, enc),
			subject: "CN=client", sends: []pathSend{
				reject("encrypted", "algorithm", "no opt-in"),
				reject("cbc", "algorithm", "another opt-in"),
				tampered("rsa15", "decrypt", "EncryptedKey changed", tamperCipherAfter(":EncryptedKey ")),
				accept("rsa15")}},

		// h. UsernameToken PasswordText only by opt-in.
		{name: "username-text", args: with([]string{"--profile", "username-text"}, user(pki.pwd)),
			username: pki.clientUser, sends: []pathSend{
				reject("user", "authentication", "PasswordText without opt-in"),
				tampered("text", "authentication", "password changed", replaceFirst(">"+pki.pwd+"<", ">x"+pki.pwd+"<")),
				accept("text")}},
		{name: "username-text-wrong-password", args: with([]string{"--profile", "username-text"}, user("not-"+pki.pwd)),
			sends: []pathSend{reject("text", "authentication", "wrong password")}},
		{name: "username-digest-on-text", args: with([]string{"--profile", "username-digest"}, user(pki.pwd)),
			username: pki.clientUser, sends: []pathSend{accept("text")}},
	}

	// Secure every message in one JVM.
	var jobs []testpeer.Job
	files := map[string]string{}
	payloads := map[string]string{}
	for i, c := range cases {
		ns := soap.NS11
		if c.version == "1.2" {
			ns = soap.NS12
		}
		body := payload(1 << 10)
		plain := plainEnvelope(ns, body)
		if c.header {
			plain = bytes.Replace(plain, []byte("<soapenv:Header/>"), []byte("<soapenv:Header>"+accountHeader+"</soapenv:Header>"), 1)
		}
		in := filepath.Join(pki.dir, fmt.Sprintf("path-%02d.plain.xml", i))
		out := strings.TrimSuffix(in, ".plain.xml") + ".xml"
		require.NoError(t, os.WriteFile(in, plain, 0o600))
		jobs = append(jobs, testpeer.Job{ID: c.name, Args: append([]string{"sign", "--in", in, "--out", out}, c.args...)})
		files[c.name], payloads[c.name] = out, body
	}
	results := wss4jBatch(t, jar, jobs)
	for _, c := range cases {
		require.True(t, results[c.name].OK, "WSS4J sign %s: %s", c.name, results[c.name].Error)
	}

	// failures counts the expected security failures per policy and
	// reason, to check the metrics at the end.
	failures := map[string]map[string]int{}
	fail := func(policy, reason string) {
		if failures[policy] == nil {
			failures[policy] = map[string]int{}
		}
		failures[policy][reason]++
	}
	seq := 0
	for _, c := range cases {
		msg, err := os.ReadFile(files[c.name])
		require.NoError(t, err)
		version := c.version
		if version == "" {
			version = "1.1"
		}
		for _, s := range c.sends {
			label := "ok"
			if s.reason != "" {
				label = "fail"
			}
			t.Run(fmt.Sprintf("%s/%s/%s/%s", label, c.name, s.route, strings.ReplaceAll(s.what, " ", "-")), func(t *testing.T) {
				data := msg
				if s.mutate != nil {
					data = s.mutate(t, bytes.Clone(msg))
					require.NotEqual(t, msg, data, "the mutation changed nothing")
				}
				seq++
				id := fmt.Sprintf("paths-%03d", seq)
				hits := backend.count()
				r := sendAttack(t, gw, "/"+s.route, version, id, data)
				if s.reason != "" {
					requireSecurityFault(t, r.asResponse(), version)
					assert.Equal(t, hits, backend.count(), "a rejected request must not reach the backend")
					got := requestReason(t, gw, id)
					assert.Contains(t, strings.Split(s.reason, "|"), got, "logged reason")
					fail(s.route, got)
					return
				}
				require.Equal(t, http.StatusOK, r.status, "%s\n%s", r.body, lastLog(gw))
				require.Equal(t, hits+1, backend.count())
				fwd, h := backend.last()
				assert.Contains(t, string(fwd), payloads[c.name], "the plaintext payload arrives byte for byte")
				for _, gone := range []string{"Security", "EncryptedData", "EncryptedHeader", "EncryptedKey", "CipherValue"} {
					assert.NotContains(t, string(fwd), gone)
				}
				if c.unsignedHeader {
					assert.NotContains(t, string(fwd), "acct-42", "an unsigned header block is stripped: %s", fwd)
				} else if c.header {
					// Decrypted in place: the header block is back in the
					// SOAP Header, before the Body.
					i, j := bytes.Index(fwd, []byte(">acct-42</hdr:Account>")), bytes.Index(fwd, []byte(":Body"))
					assert.True(t, i > 0 && i < j, "header block in place: %s", fwd)
				}
				if c.subject != "" {
					assert.Contains(t, h.Get("X-WSS-Subject"), c.subject)
					assert.Len(t, h.Get("X-WSS-Thumbprint"), 64)
				} else {
					assert.Empty(t, h.Get("X-WSS-Subject"), "no trusted signer, no subject")
					assert.Empty(t, h.Get("X-WSS-Thumbprint"))
				}
				assert.Equal(t, c.username, h.Get("X-WSS-Username"))

				// Accepted once, replayed after: uniform fault, no
				// backend call.
				seq++
				rid := fmt.Sprintf("paths-%03d", seq)
				r = sendAttack(t, gw, "/"+s.route, version, rid, data)
				fail(s.route, "replay")
				requireSecurityFault(t, r.asResponse(), version)
				assert.Equal(t, hits+1, backend.count())
				assert.Equal(t, "replay", requestReason(t, gw, rid))
			})
		}
	}

	// Every rejection is counted under its policy with its reason.
	fams := scrape(t, gw)
	for _, policy := range pathPolicies {
		got := map[string]int{}
		for _, m := range fams["wssgw_security_failures_total"].GetMetric() {
			if !matches(m, map[string]string{"policy": policy}) || m.GetCounter().GetValue() == 0 {
				continue
			}
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "reason" {
					got[lp.GetValue()] = int(m.GetCounter().GetValue())
				}
			}
		}
		want := failures[policy]
		if want == nil {
			want = map[string]int{}
		}
		assert.Equal(t, want, got, "security failures of policy %s", policy)
	}
	// The legacy uses are visible per policy.
	for _, u := range []struct{ policy, kind, alg string }{
		{"sha1", "signature", "rsa-sha1"}, {"cbc", "data", "aes256-cbc"}, {"rsa15", "key_transport", "rsa-1_5"},
		{"symmetric", "signature", "hmac-sha256"}, {"symmetric", "key_reference", "encrypted_key"},
	} {
		assert.Positive(t, value(t, fams, "wssgw_security_algorithm_uses_total",
			map[string]string{"policy": u.policy, "kind": u.kind, "algorithm": u.alg}), "%v", u)
	}
}

// requestReason is the reason in the request log line of correlation id
// id ("" when the request was accepted).
func requestReason(t *testing.T, g *gateway, id string) string {
	t.Helper()
	var line map[string]any
	require.Eventually(t, func() bool {
		for _, l := range g.logs.find("request") {
			if l["id"] == id {
				line = l
				return true
			}
		}
		return false
	}, 5*time.Second, 5*time.Millisecond, "no request log line for %s", id)
	return logReason(line)
}

// replaceFirst returns a mutation replacing the first occurrence of old.
func replaceFirst(old, new string) func(*testing.T, []byte) []byte {
	return func(t *testing.T, b []byte) []byte {
		t.Helper()
		require.Contains(t, string(b), old)
		return bytes.Replace(b, []byte(old), []byte(new), 1)
	}
}

// flipBase64 changes one base64 character in the middle of b[a:e].
func flipBase64(b []byte, a, e int) []byte {
	i := a + (e-a)/2
	for b[i] == '=' || b[i] == '\n' || b[i] == '\r' {
		i--
	}
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return b
}

// tamperCipherAfter flips a byte in the first xenc:CipherValue after the
// first occurrence of marker (":Body ", ":EncryptedKey ", ...).
func tamperCipherAfter(marker string) func(*testing.T, []byte) []byte {
	return func(t *testing.T, b []byte) []byte {
		t.Helper()
		at := bytes.Index(b, []byte(marker))
		require.GreaterOrEqual(t, at, 0, marker)
		loc := cipherValueRE.FindSubmatchIndex(b[at:])
		require.NotNil(t, loc, "CipherValue after %s", marker)
		return flipBase64(b, at+loc[2], at+loc[3])
	}
}

var cipherValueRE = regexp.MustCompile(`CipherValue>([^<]+)<`)

// tamperElement flips a byte in the first element of that local name.
func tamperElement(local string) func(*testing.T, []byte) []byte {
	re := regexp.MustCompile(`:` + local + `[^>]*>([^<]+)<`)
	return func(t *testing.T, b []byte) []byte {
		t.Helper()
		loc := re.FindSubmatchIndex(b)
		require.NotNil(t, loc, local)
		return flipBase64(b, loc[2], loc[3])
	}
}

// tamperKeyIdentifier changes every EncryptedKeySHA1 KeyIdentifier to name
// a key that is not in the message.
func tamperKeyIdentifier(t *testing.T, b []byte) []byte {
	t.Helper()
	re := regexp.MustCompile(`(EncryptedKeySHA1"[^>]*>)([^<]+)<`)
	require.True(t, re.Match(b))
	return re.ReplaceAllFunc(b, func(m []byte) []byte {
		loc := re.FindSubmatchIndex(m)
		return flipBase64(m, loc[4], loc[5])
	})
}

// tamperBSTWhitespace puts a line break in the token's base64: the
// certificate is the same, its canonical form (which the STR-Transform
// digests) is not.
func tamperBSTWhitespace(t *testing.T, b []byte) []byte {
	t.Helper()
	re := regexp.MustCompile(`(BinarySecurityToken [^>]*>)(MII)`)
	require.True(t, re.Match(b))
	return re.ReplaceAll(b, []byte("${1}\n${2}"))
}
