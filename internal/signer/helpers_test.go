package signer

import (
	"bytes"
	"crypto"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/c14n"
	wcrypto "github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/testpki"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// issueRSA issues an RSA-2048 leaf from ca (testpki issues EC leaves only)
// and writes it to dir. ski sets the SubjectKeyIdentifier extension, so
// that both ways of finding a SKI are exercised.
func issueRSA(t testing.TB, ca *testpki.CA, dir, name string, serial int64, ski bool) *testpki.Leaf {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	return issue(t, ca, dir, name, key, serial, ski)
}

// issue issues a leaf for key from ca and writes it to dir.
func issue(t testing.TB, ca *testpki.CA, dir, name string, key crypto.Signer, serial int64, ski bool) *testpki.Leaf {
	t.Helper()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: name, Organization: []string{"wssgw"}},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
	}
	if ski {
		tmpl.SubjectKeyId = []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, byte(serial)}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.Key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	l := &testpki.Leaf{Cert: cert, Key: key, CertFile: filepath.Join(dir, name+".crt"), KeyFile: filepath.Join(dir, name+".key")}
	require.NoError(t, os.WriteFile(l.CertFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(l.KeyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600))
	return l
}

// soapEnv returns a plain envelope of the given version with a Body whose
// content is about size bytes, and optional header blocks.
func soapEnv(v12 bool, size int, headers string) []byte {
	ns, p := nsSOAP11, "soapenv"
	if v12 {
		ns, p = nsSOAP12, "env"
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+`<%s:Envelope xmlns:%s="%s" xmlns:ns1="urn:example:orders" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">`, p, p, ns)
	if headers != "" {
		fmt.Fprintf(&b, "\n  <%s:Header>%s</%s:Header>", p, headers, p)
	}
	fmt.Fprintf(&b, "\n  <%s:Body>\n    <ns1:PlaceOrder xsi:type=\"ns1:OrderT\">", p)
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "\n      <ns1:Item n=\"%d\" note=\"a &amp; b &lt; c\">widget &#xE9; %d</ns1:Item>", i, i)
	}
	fmt.Fprintf(&b, "\n    </ns1:PlaceOrder>\n  </%s:Body>\n</%s:Envelope>\n", p, p)
	return []byte(b.String())
}

// checked is what verifySecured found.
type checked struct {
	refs      []string // local names of the referenced elements, in order
	encrypted bool
	plain     []byte // the message with the Body content decrypted
}

// verifySecured is an independent check of Secure's output: it scans the
// message, decrypts the Body if needed (and compares it with wantBody),
// recomputes every Reference digest with c14n, and verifies the
// SignatureValue with cert's public key. It returns an error rather than
// failing so that tamper tests can assert the failure.
func verifySecured(msg []byte, cert *x509.Certificate, recipient crypto.PrivateKey, wantBody []byte) (*checked, error) {
	return verifySecuredAtt(msg, cert, recipient, wantBody, nil)
}

// verifySecuredAtt is verifySecured for a message with SwA references:
// a "cid:" Reference digests atts[cid] as it is (Attachment-Content of a
// binary part, SwA Profile 1.1 §5.4.1).
func verifySecuredAtt(msg []byte, cert *x509.Certificate, recipient crypto.PrivateKey, wantBody []byte, atts map[string][]byte) (*checked, error) {
	var d xmlscan.Document
	if err := xmlscan.Scan(msg, &d); err != nil {
		return nil, err
	}
	res := &checked{plain: msg}
	if ed := find(&d, nsXEnc, "EncryptedData"); ed >= 0 {
		res.encrypted = true
		body := d.Elements[ed].Parent
		if d.Elements[body].Local != "Body" {
			return nil, fmt.Errorf("EncryptedData not in Body")
		}
		ek := find(&d, nsXEnc, "EncryptedKey")
		if ek < 0 {
			return nil, fmt.Errorf("no EncryptedKey")
		}
		wrapped, err := b64(childText(&d, ek, "CipherValue"))
		if err != nil {
			return nil, err
		}
		rk, ok := recipient.(*rsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("no RSA recipient key")
		}
		key, err := rsa.DecryptOAEP(sha1.New(), nil, rk, wrapped, nil)
		if err != nil {
			return nil, fmt.Errorf("unwrap: %w", err)
		}
		ct, err := b64(childText(&d, ed, "CipherValue"))
		if err != nil {
			return nil, err
		}
		blk, _ := aes.NewCipher(key)
		g, _ := cipher.NewGCM(blk)
		if len(ct) < 12 {
			return nil, fmt.Errorf("short ciphertext")
		}
		pt, err := g.Open(nil, ct[:12], ct[12:], nil)
		if err != nil {
			return nil, fmt.Errorf("decrypt: %w", err)
		}
		if wantBody != nil && !bytes.Equal(pt, wantBody) {
			return nil, fmt.Errorf("decrypted Body content differs")
		}
		el := d.Elements[body]
		plain := append(append(append([]byte{}, msg[:el.StartEnd]...), pt...), msg[el.EndStart:]...)
		res.plain = plain
		d.Reset()
		if err := xmlscan.Scan(plain, &d); err != nil {
			return nil, err
		}
	}
	si := find(&d, nsDS, "SignedInfo")
	if si < 0 {
		return nil, fmt.Errorf("no SignedInfo")
	}
	for r := si + 1; r < d.Elements[si].Next; r++ {
		if d.Elements[r].Local != "Reference" {
			continue
		}
		uri := attr(&d, r, "", "URI")
		if cid, ok := strings.CutPrefix(uri, "cid:"); ok {
			hh, err := wcrypto.NewDigest(attr(&d, find2(&d, r, nsDS, "DigestMethod"), "", "Algorithm"))
			if err != nil {
				return nil, err
			}
			cid, err = unescapeCID(cid)
			if err != nil {
				return nil, err
			}
			content, ok := atts[cid]
			want, err := b64(childText(&d, r, "DigestValue"))
			if err != nil || !ok {
				return nil, fmt.Errorf("attachment %s: %v", uri, err)
			}
			hh.Write(content)
			if !bytes.Equal(want, hh.Sum(nil)) {
				return nil, fmt.Errorf("digest mismatch for %s", uri)
			}
			res.refs = append(res.refs, "cid")
			continue
		}
		target := -1
		for e := range d.Elements {
			if v := attr(&d, e, nsWSU, "Id"); v != "" && "#"+v == uri {
				if target >= 0 {
					return nil, fmt.Errorf("duplicate id %s", uri)
				}
				target = e
			}
		}
		if target < 0 {
			return nil, fmt.Errorf("reference %s not found", uri)
		}
		res.refs = append(res.refs, d.Elements[target].Local)
		hh, err := wcrypto.NewDigest(attr(&d, find2(&d, r, nsDS, "DigestMethod"), "", "Algorithm"))
		if err != nil {
			return nil, err
		}
		if err := c14n.ExclusiveTo(hh, &d, target, prefixListOf(&d, find2(&d, r, nsDS, "Transform")), false); err != nil {
			return nil, err
		}
		want, err := b64(childText(&d, r, "DigestValue"))
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(want, hh.Sum(nil)) {
			return nil, fmt.Errorf("digest mismatch for %s (%s)", uri, d.Elements[target].Local)
		}
	}
	cm := find2(&d, si, nsDS, "CanonicalizationMethod")
	c, err := c14n.Exclusive(&d, si, prefixListOf(&d, cm), false, nil)
	if err != nil {
		return nil, err
	}
	sig, err := b64(childText(&d, d.Elements[si].Parent, "SignatureValue"))
	if err != nil {
		return nil, err
	}
	alg := attr(&d, find2(&d, si, nsDS, "SignatureMethod"), "", "Algorithm")
	return res, verifySig(alg, cert.PublicKey, c, sig)
}

func verifySig(alg string, pub crypto.PublicKey, msg, sig []byte) error {
	a, ok := sigAlgs[alg]
	if !ok {
		return fmt.Errorf("unknown SignatureMethod %q", alg)
	}
	if a.kind == "ed25519" {
		if !ed25519.Verify(pub.(ed25519.PublicKey), msg, sig) {
			return fmt.Errorf("ed25519 signature invalid")
		}
		return nil
	}
	h := a.hash.New()
	h.Write(msg)
	sum := h.Sum(nil)
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return rsa.VerifyPKCS1v15(k, a.hash, sum, sig)
	case *ecdsa.PublicKey:
		n := len(sig) / 2
		if n != (k.Curve.Params().BitSize+7)/8 {
			return fmt.Errorf("ECDSA signature length %d", len(sig))
		}
		if !ecdsa.Verify(k, sum, new(big.Int).SetBytes(sig[:n]), new(big.Int).SetBytes(sig[n:])) {
			return fmt.Errorf("ecdsa signature invalid")
		}
		return nil
	}
	return fmt.Errorf("key %T", pub)
}

func b64(s string) ([]byte, error) { return base64.StdEncoding.DecodeString(s) }

// find returns the first element named {space}local, or -1.
func find(d *xmlscan.Document, space, local string) int {
	return find2(d, 0, space, local)
}

// find2 returns the first element named {space}local in the subtree of
// element from, or -1.
func find2(d *xmlscan.Document, from int, space, local string) int {
	for e := from; e < d.Elements[from].Next; e++ {
		if d.Elements[e].Space == space && d.Elements[e].Local == local {
			return e
		}
	}
	return -1
}

func attr(d *xmlscan.Document, e int, space, local string) string {
	if e < 0 {
		return ""
	}
	if j := d.FindAttr(e, space, local); j >= 0 {
		return string(d.AttrValue(j, nil))
	}
	return ""
}

// childText is the text of the first descendant of e with that local name.
func childText(d *xmlscan.Document, e int, local string) string {
	for k := e + 1; k < d.Elements[e].Next; k++ {
		if d.Elements[k].Local == local {
			return string(d.Text(k, nil))
		}
	}
	return ""
}

// prefixListOf is the PrefixList under a c14n method element, nil if none.
func prefixListOf(d *xmlscan.Document, m int) []string {
	if m < 0 {
		return nil
	}
	in := find2(d, m, nsEC, "InclusiveNamespaces")
	if in < 0 {
		return nil
	}
	l, _ := c14n.ParsePrefixList(attr(d, in, "", "PrefixList"))
	return l
}

// bodyContent returns the Body content bytes of an envelope.
func bodyContent(t testing.TB, env []byte) []byte {
	t.Helper()
	var d xmlscan.Document
	require.NoError(t, xmlscan.Scan(env, &d))
	for e := range d.Elements {
		if d.Elements[e].Local == "Body" && d.Elements[e].Depth == 2 {
			return env[d.Elements[e].StartEnd:d.Elements[e].EndStart]
		}
	}
	t.Fatal("no Body")
	return nil
}

// mkdirTemp makes a directory for the shared PKI; TestMain removes it.
func mkdirTemp() (string, error) { return os.MkdirTemp("", "signer-pki-") }
