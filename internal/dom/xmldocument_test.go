package dom

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/c14n"
	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/reload"
	"github.com/wssgw/wssgw/internal/testvectors"
	"github.com/wssgw/wssgw/internal/wss"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// TestVerifyDocument checks VerifyDocument on WSS4J's signed messages read
// as plain documents: the same signature rules as Process, without the
// SOAP and Security header structure.
func TestVerifyDocument(t *testing.T) {
	needVectors(t)
	e := newEngine(t)
	p := vectorPolicy(t, nil)
	read := func(t *testing.T, rel string) []byte {
		b, err := os.ReadFile(filepath.Join(vectorDir, rel))
		require.NoError(t, err)
		return b
	}
	issuerSerial := read(t, "sign-issuerserial/0000.xml")
	now := createdOf(t, issuerSerial).Add(time.Second)
	tamper := func(b []byte) []byte {
		// Text added to the Body: its digest no longer matches.
		i := bytes.Index(b, []byte(":Body "))
		require.Positive(t, i)
		j := i + bytes.IndexByte(b[i:], '>') + 1
		return append(append(append([]byte{}, b[:j]...), 'x'), b[j:]...)
	}
	tests := []struct {
		name   string
		data   []byte
		now    time.Time
		reason wss.Reason
	}{
		{name: "ok/issuer-serial", data: issuerSerial, now: now},
		{name: "fail/tampered-body", data: tamper(issuerSerial), now: now, reason: wss.ReasonDigest},
		// The STR names a BinarySecurityToken, which is only ever taken
		// from our Security header; a plain document has none.
		{name: "fail/bst-reference", data: read(t, "sign-bst/0000.xml"), now: now, reason: wss.ReasonToken},
		{name: "fail/no-signature", data: []byte(`<a/>`), now: now, reason: wss.ReasonMissing},
		{name: "fail/doctype", data: []byte(`<!DOCTYPE a []><a/>`), now: now, reason: wss.ReasonMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := e.VerifyDocument(tc.data, p, tc.now)
			if tc.reason != 0 {
				require.Error(t, err)
				require.Equal(t, tc.reason, reasonOf(err), "%v", err)
				return
			}
			require.NoError(t, err)
			require.Len(t, res.Signatures, 1)
			assert.Contains(t, res.Signatures[0].Signer.Subject, "CN=client")
			assert.Len(t, res.Signatures[0].Covered, 2, "Body and Timestamp")
			assert.Equal(t, -1, res.Body)
			assert.Equal(t, tc.data, res.Document)
		})
	}
}

// TestDecryptDocument checks DecryptDocument on the XMLEnc 1.1 interop
// vector with AES-128-GCM and RSA-OAEP to the RSA-2048 test key. As shipped
// it also names the recipient by X509SubjectName, which wssgw does not take
// as a key reference; without that element (KeyInfo is not integrity
// protected) it decrypts to the expected plaintext.
func TestDecryptDocument(t *testing.T) {
	const vec = "xmlenc11-interop-2012/cipherText__RSA-2048__aes128-gcm__rsa-oaep-mgf1p"
	shipped := testvectors.Read(t, "xmlsec/"+vec+".xml")
	want, err := os.ReadFile(filepath.Join(xmlsecDir, vec+".data"))
	require.NoError(t, err)
	// The .data file is the original document; the encryptor serialized
	// the element differently (an empty-element tag became a start-end
	// pair), so the two are compared in canonical form.
	canon := func(t *testing.T, b []byte) string {
		var d xmlscan.Document
		require.NoError(t, xmlscan.Scan(b, &d))
		out, err := c14n.Canonicalize(c14n.AlgC14N10, &d, 0, nil, nil)
		require.NoError(t, err)
		return string(out)
	}

	pwFile := filepath.Join(t.TempDir(), "pw")
	require.NoError(t, os.WriteFile(pwFile, []byte("passwd"), 0o600))
	policy := func(withKey bool) *wss.Policy {
		p := config.DefaultPolicy()
		if withKey {
			p.DecryptionKeys = []config.KeyFiles{{
				PKCS12File:   filepath.Join(xmlsecDir, "xmlenc11-interop-2012/RSA-2048_SHA256WithRSA.p12"),
				PasswordFile: pwFile,
			}}
		}
		cp, err := wss.Compile("interop", p, nil, reload.Options{})
		require.NoError(t, err)
		return cp
	}
	withKey, noKey := policy(true), policy(false)

	stripped := regexp.MustCompile(`<dsig:X509SubjectName>[^<]*</dsig:X509SubjectName>`).ReplaceAll(shipped, nil)
	require.NotEqual(t, shipped, stripped)
	// Flip one base64 character of the data CipherValue (the last one).
	tampered := append([]byte{}, stripped...)
	i := bytes.LastIndex(tampered, []byte("</xenc:CipherValue>")) - 10
	require.Positive(t, i)
	if tampered[i] == 'A' {
		tampered[i] = 'B'
	} else {
		tampered[i] = 'A'
	}

	tests := []struct {
		name   string
		data   []byte
		p      *wss.Policy
		reason wss.Reason
	}{
		{name: "ok/x509data", data: stripped, p: withKey},
		{name: "fail/x509-subject-name", data: shipped, p: withKey, reason: wss.ReasonToken},
		{name: "fail/not-our-key", data: stripped, p: noKey, reason: wss.ReasonToken},
		{name: "fail/tampered-ciphertext", data: tampered, p: withKey, reason: wss.ReasonDecrypt},
		{name: "fail/no-encrypted-data", data: []byte(`<a/>`), p: withKey, reason: wss.ReasonMissing},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := newEngine(t).DecryptDocument(tc.data, tc.p, conformanceNow)
			if tc.reason != 0 {
				require.Error(t, err)
				require.Equal(t, tc.reason, reasonOf(err), "%v", err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, canon(t, want), canon(t, out))
			assert.NotContains(t, string(out), "EncryptedData")
		})
	}
}
