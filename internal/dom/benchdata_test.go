package dom

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wssgw/wssgw/internal/c14n"
	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/reload"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/testpki"
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// This file builds the messages of bench_test.go: WS-Security messages made
// by Apache WSS4J (interop/wss4j), or by internal/signer when java or mvn
// is missing, and for each one the inputs of its crypto floor.

// benchCase describes one benchmark message.
type benchCase struct {
	name    string
	profile string // WSS4J profile
	body    int    // bytes of Body content before securing
	encrypt bool
}

// benchCases are the messages: sign-only envelopes of about 4 KiB and
// 100 KiB (the latter with about 2,000 Body elements, like
// shared/research/performance.md B3), and the 4 KiB plain envelope signed
// and then Body-encrypted (AES-256-GCM under RSA-OAEP), which grows to
// about 6 KiB with the EncryptedKey and EncryptedData markup.
var benchCases = []benchCase{
	{name: "sign-4KiB", profile: "sign-bst", body: 300},
	{name: "sign-100KiB", profile: "sign-bst", body: 98_000},
	{name: "sign-encrypt-4KiB", profile: "sign-encrypt", body: 300, encrypt: true},
}

// benchMsg is one secured message plus the precomputed inputs of its crypto
// floor.
type benchMsg struct {
	name string
	data []byte
	now  time.Time // injected clock: the Timestamp's Created + 1 s

	// Floor inputs, all computed outside any timer.
	signedInfo []byte   // canonical SignedInfo, as verified
	sigValue   []byte   // decoded SignatureValue
	refs       [][]byte // canonical bytes of each referenced element
	digests    [][]byte // their DigestValues
	ekCipher   []byte   // decoded EncryptedKey CipherValue; nil when not encrypted
	edCipher   []byte   // decoded EncryptedData CipherValue (IV || ciphertext || tag)
}

// benchSet is what every benchmark of this package shares for the process.
type benchSet struct {
	source string // "wss4j" or why the signer fallback was taken
	engine *Engine
	policy *wss.Policy
	pub    *rsa.PublicKey  // signer key
	priv   *rsa.PrivateKey // recipient (decryption) key
	msgs   []*benchMsg
}

var (
	benchOnce sync.Once
	benchSt   *benchSet
	benchErr  error
)

// benchMessages returns the process-wide benchmark set, building it on the
// first call (so -count does not rebuild it). Keys and the messages'
// intermediate files go to b.TempDir(); once the policy is compiled nothing
// reads them again.
func benchMessages(b *testing.B) *benchSet {
	b.Helper()
	benchOnce.Do(func() {
		benchSt, benchErr = buildBench(b, b.TempDir())
		if benchErr == nil {
			// Printed, so that a fallback to signer-made messages is
			// never silent.
			fmt.Printf("dom benchmarks: messages made by %s\n", benchSt.source)
		}
	})
	if benchErr != nil {
		b.Fatalf("benchmark setup: %v", benchErr)
	}
	return benchSt
}

// benchKeys are the PEM files of the benchmark PKI.
type benchKeys struct {
	ca, clientCert, clientKey, serverCert, serverKey string
	client, server                                   *rsa.PrivateKey
	clientX509, serverX509                           *x509.Certificate
}

func buildBench(tb testing.TB, dir string) (*benchSet, error) {
	keys, err := benchPKI(tb, dir)
	if err != nil {
		return nil, err
	}
	now := time.Now().UTC().Truncate(time.Second)
	plains := make([][]byte, len(benchCases))
	for i, c := range benchCases {
		plains[i] = benchEnvelope(c.body)
	}

	bs := &benchSet{source: "wss4j", pub: &keys.client.PublicKey, priv: keys.server}
	var secured [][]byte
	if reason := benchNoPeer(); reason != "" {
		bs.source = "signer (" + reason + ")"
		secured, err = benchSignerMessages(keys, plains, now)
	} else {
		secured, err = benchWSS4JMessages(dir, keys, plains, now)
		if err != nil && os.Getenv("CI") != "true" {
			bs.source = fmt.Sprintf("signer (WSS4J peer failed: %v)", err)
			secured, err = benchSignerMessages(keys, plains, now)
		}
	}
	if err != nil {
		return nil, err
	}

	if bs.engine, err = New(xmlscan.DefaultConfig()); err != nil {
		return nil, err
	}
	p := config.DefaultPolicy()
	// Replay off: the same message is processed b.N times.
	p.Replay = "off"
	p.Trust.CAFiles = []string{keys.ca}
	p.DecryptionKeys = []config.KeyFiles{{CertFile: keys.serverCert, KeyFile: keys.serverKey}}
	if bs.policy, err = wss.Compile("bench", p, nil, reload.Options{}); err != nil {
		return nil, err
	}

	for i, c := range benchCases {
		m, err := bs.floorInputs(c, secured[i])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		// The floor must succeed, so that no benchmark times a failure.
		if _, err := floorOnce(bs, m, nil); err != nil {
			return nil, fmt.Errorf("%s: crypto floor: %w", c.name, err)
		}
		bs.msgs = append(bs.msgs, m)
	}
	return bs, nil
}

// benchPKI writes a test CA (testpki, ECDSA) with RSA-2048 client (signer)
// and server (recipient) leaves to dir.
func benchPKI(tb testing.TB, dir string) (*benchKeys, error) {
	ca := testpki.NewCA(tb, "wssgw bench CA")
	k := &benchKeys{ca: ca.WriteCert(tb, dir)}
	var err error
	if k.client, k.clientX509, k.clientCert, k.clientKey, err = benchIssue(ca, dir, "client", 10); err != nil {
		return nil, err
	}
	if k.server, k.serverX509, k.serverCert, k.serverKey, err = benchIssue(ca, dir, "server", 11); err != nil {
		return nil, err
	}
	return k, nil
}

func benchIssue(ca *testpki.CA, dir, name string, serial int64) (*rsa.PrivateKey, *x509.Certificate, string, string, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, nil, "", "", err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: name, Organization: []string{"wssgw"}},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		return nil, nil, "", "", err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, "", "", err
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, "", "", err
	}
	cf, kf := filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	if err := os.WriteFile(cf, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return nil, nil, "", "", err
	}
	if err := os.WriteFile(kf, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		return nil, nil, "", "", err
	}
	return key, cert, cf, kf, nil
}

// benchEnvelope is a plain SOAP 1.1 envelope whose Body content is about
// size bytes of small order items (about 49 bytes per element).
func benchEnvelope(size int) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/">` +
		`<soapenv:Header/><soapenv:Body><ns1:placeOrder xmlns:ns1="urn:example:orders">`)
	start := b.Len()
	for i := 0; b.Len()-start < size; i++ {
		fmt.Fprintf(&b, "\n<ns1:item sku=\"S-%d\" qty=\"%d\">Widget &amp; %d</ns1:item>", i, i%9+1, i)
	}
	b.WriteString("\n</ns1:placeOrder></soapenv:Body></soapenv:Envelope>\n")
	return []byte(b.String())
}

// benchNoPeer says why the WSS4J peer cannot run, or "".
func benchNoPeer() string {
	for _, tool := range []string{"java", "mvn"} {
		if _, err := exec.LookPath(tool); err != nil {
			return tool + " not installed"
		}
	}
	return ""
}

// benchWSS4JMessages has the WSS4J peer secure the plain envelopes, in one
// JVM (batch mode).
func benchWSS4JMessages(dir string, k *benchKeys, plains [][]byte, now time.Time) ([][]byte, error) {
	var stderr bytes.Buffer
	build := exec.Command("bash", filepath.Join("..", "..", "interop", "wss4j", "build.sh"))
	build.Stderr = &stderr
	out, err := build.Output()
	if err != nil {
		return nil, fmt.Errorf("build the WSS4J peer: %v: %s", err, stderr.String())
	}
	jar := strings.TrimSpace(string(out))

	var jobs bytes.Buffer
	enc := json.NewEncoder(&jobs)
	outs := make([]string, len(benchCases))
	for i, c := range benchCases {
		in := filepath.Join(dir, c.name+".plain.xml")
		if err := os.WriteFile(in, plains[i], 0o600); err != nil {
			return nil, err
		}
		outs[i] = filepath.Join(dir, c.name+".xml")
		args := []string{"sign", "--profile", c.profile, "--in", in, "--out", outs[i],
			"--key", k.clientKey, "--cert", k.clientCert, "--now", now.Format(time.RFC3339)}
		if c.encrypt {
			args = append(args, "--encrypt-cert", k.serverCert)
		}
		if err := enc.Encode(map[string]any{"id": c.name, "args": args}); err != nil {
			return nil, err
		}
	}
	stderr.Reset()
	cmd := exec.Command("java", "-jar", jar, "batch")
	cmd.Stdin, cmd.Stderr = &jobs, &stderr
	res, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("WSS4J peer: %v: %s %s", err, res, stderr.String())
	}
	secured := make([][]byte, len(outs))
	for i, f := range outs {
		if secured[i], err = os.ReadFile(f); err != nil {
			return nil, err
		}
	}
	return secured, nil
}

// benchSignerMessages is the fallback: internal/signer, whose output WSS4J
// verifies (internal/signer/wss4j_test.go), secures the envelopes the way
// the sign-bst and sign-encrypt profiles do.
func benchSignerMessages(k *benchKeys, plains [][]byte, now time.Time) ([][]byte, error) {
	out := make([][]byte, len(plains))
	for i, c := range benchCases {
		o := signer.DefaultOptions()
		o.Signer, o.Certificate = k.client, k.clientX509
		o.Now = func() time.Time { return now }
		if c.encrypt {
			o.EncryptFor = k.serverX509
		}
		var err error
		if out[i], err = signer.Secure(plains[i], o); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// floorInputs checks that the engine accepts msg and extracts, from the
// plaintext document it verified, the exact bytes the crypto floor works
// on. The extraction is independent of the engine (xmlscan + c14n), and
// every digest and the signature are checked here, so the floor provably
// hashes and verifies the same bytes the engine does.
func (bs *benchSet) floorInputs(c benchCase, msg []byte) (*benchMsg, error) {
	m := &benchMsg{name: c.name, data: msg}
	ts := createdRE.FindSubmatch(msg)
	if ts == nil {
		return nil, errors.New("no Timestamp Created")
	}
	created, err := time.Parse(time.RFC3339Nano, string(ts[1]))
	if err != nil {
		return nil, err
	}
	m.now = created.Add(time.Second)
	res, err := bs.engine.Process(msg, bs.policy, m.now)
	if err != nil {
		return nil, fmt.Errorf("DOM engine rejects the message: %w", err)
	}
	if err := bs.policy.Check(context.Background(), res, m.now); err != nil {
		return nil, fmt.Errorf("policy rejects the message: %w", err)
	}
	if c.encrypt != (len(res.Decrypted) > 0) {
		return nil, fmt.Errorf("encrypted=%v but %d decryptions", c.encrypt, len(res.Decrypted))
	}

	if c.encrypt {
		var d xmlscan.Document
		if err := xmlscan.Scan(msg, &d); err != nil {
			return nil, err
		}
		ek, ed := benchFind(&d, 0, nsXEnc, "EncryptedKey"), benchFind(&d, 0, nsXEnc, "EncryptedData")
		if ek < 0 || ed < 0 {
			return nil, errors.New("no EncryptedKey or EncryptedData")
		}
		if m.ekCipher, err = benchB64(&d, benchFind(&d, ek, nsXEnc, "CipherValue")); err != nil {
			return nil, err
		}
		if m.edCipher, err = benchB64(&d, benchFind(&d, ed, nsXEnc, "CipherValue")); err != nil {
			return nil, err
		}
	}

	// Signature inputs come from the plaintext (decrypted) document: the
	// sign-encrypt Body reference digests the Body before encryption.
	var d xmlscan.Document
	if err := xmlscan.Scan(res.Document, &d); err != nil {
		return nil, err
	}
	si := benchFind(&d, 0, nsDS, "SignedInfo")
	if si < 0 {
		return nil, errors.New("no SignedInfo")
	}
	if m.signedInfo, err = c14n.Exclusive(&d, si, benchPrefixes(&d, benchFind(&d, si, nsDS, "CanonicalizationMethod")), false, nil); err != nil {
		return nil, err
	}
	if m.sigValue, err = benchB64(&d, benchFind(&d, d.Elements[si].Parent, nsDS, "SignatureValue")); err != nil {
		return nil, err
	}
	for r := d.FirstChild(si); r >= 0; r = d.NextSibling(r) {
		if d.Elements[r].Local != "Reference" {
			continue
		}
		uri := attrOf(&d, r, "URI")
		target := -1
		for e := range d.Elements {
			if v, ok := benchID(&d, e); ok && "#"+v == uri {
				target = e
			}
		}
		if target < 0 {
			return nil, fmt.Errorf("reference %s not found", uri)
		}
		canon, err := c14n.Exclusive(&d, target, benchPrefixes(&d, benchFind(&d, r, nsDS, "Transform")), false, nil)
		if err != nil {
			return nil, err
		}
		want, err := benchB64(&d, benchFind(&d, r, nsDS, "DigestValue"))
		if err != nil {
			return nil, err
		}
		if sum := sha256.Sum256(canon); !bytes.Equal(sum[:], want) {
			return nil, fmt.Errorf("floor bytes of %s do not match its digest", uri)
		}
		m.refs, m.digests = append(m.refs, canon), append(m.digests, want)
	}
	if len(m.refs) == 0 {
		return nil, errors.New("no References")
	}
	sum := sha256.Sum256(m.signedInfo)
	if err := rsa.VerifyPKCS1v15(bs.pub, crypto.SHA256, sum[:], m.sigValue); err != nil {
		return nil, fmt.Errorf("floor SignedInfo does not verify: %w", err)
	}
	return m, nil
}

// benchFind returns the first element {space}local in the subtree of from.
func benchFind(d *xmlscan.Document, from int, space, local string) int {
	if from < 0 {
		return -1
	}
	for e := from; e < d.Elements[from].Next; e++ {
		if d.Elements[e].Space == space && d.Elements[e].Local == local {
			return e
		}
	}
	return -1
}

func benchB64(d *xmlscan.Document, e int) ([]byte, error) {
	if e < 0 {
		return nil, errors.New("missing base64 element")
	}
	return base64.StdEncoding.DecodeString(strings.TrimSpace(string(d.Text(e, nil))))
}

// benchPrefixes is the InclusiveNamespaces PrefixList under a c14n method.
func benchPrefixes(d *xmlscan.Document, method int) []string {
	in := benchFind(d, method, nsExcC14N, "InclusiveNamespaces")
	if in < 0 {
		return nil
	}
	l, _ := c14n.ParsePrefixList(attrOf(d, in, "PrefixList"))
	return l
}

// benchID is element e's wsu:Id or unqualified Id.
func benchID(d *xmlscan.Document, e int) (string, bool) {
	for _, space := range []string{nsWSU, ""} {
		if j := d.FindAttr(e, space, "Id"); j >= 0 {
			return string(d.AttrValue(j, nil)), true
		}
	}
	return "", false
}
