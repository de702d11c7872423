package signer

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/testpeer"
	"github.com/wssgw/wssgw/internal/testpki"
)

// peerResult is the part of the peer's verify JSON the tests look at.
type peerResult struct {
	ID             string   `json:"id"`
	Exit           int      `json:"exit"`
	OK             bool     `json:"ok"`
	Error          string   `json:"error"`
	ErrorCode      string   `json:"errorCode"`
	SOAPVersion    string   `json:"soapVersion"`
	Actions        []string `json:"actions"`
	SignedParts    []string `json:"signedParts"`
	EncryptedParts []string `json:"encryptedParts"`
	Signatures     []struct {
		KeyReference    string `json:"keyReference"`
		SignatureMethod string `json:"signatureMethod"`
	} `json:"signatures"`
	Encryption []struct {
		KeyReference string `json:"keyReference"`
	} `json:"encryption"`
}

// runPeer runs the jobs in one JVM (batch mode) and returns the results
// by job id.
func runPeer(t *testing.T, jar string, jobs []testpeer.Job) map[string]peerResult {
	t.Helper()
	cmd := exec.Command("java", "-jar", jar, "batch", "--parallel", "2")
	return testpeer.Batch[testpeer.Job, peerResult](t, cmd, jobs)
}

// wss4jCase is one message for the peer to verify.
type wss4jCase struct {
	name    string
	signer  *testpki.Leaf
	soap12  bool
	keyRef  string
	encRef  string // "" means no encryption
	headers []xml.Name
	tamper  func(msg []byte) []byte // negative case: the peer must reject
}

// TestWSS4J has Apache WSS4J 4.0.0 (the peer) verify what Secure produces
// in every key reference mode, with RSA and EC P-256 signers, SOAP 1.1 and
// 1.2, with and without encryption; and reject tampered messages.
func TestWSS4J(t *testing.T) {
	jar := testpeer.Jar(t, "wss4j")
	p := testPKI(t)
	dir := t.TempDir()

	var cases []wss4jCase
	for _, ref := range []string{RefBST, RefIssuerSerial, RefSKI, RefThumbprint} {
		for _, signer := range []*testpki.Leaf{p.rsa, p.ec} {
			for _, v12 := range []bool{false, true} {
				for _, enc := range []string{"", RefIssuerSerial} {
					name := fmt.Sprintf("ok/%s-%s-soap1%d", ref, keyName(signer, p), map[bool]int{false: 1, true: 2}[v12])
					if enc != "" {
						name += "-encrypt"
					}
					cases = append(cases, wss4jCase{name: name, signer: signer, soap12: v12, keyRef: ref, encRef: enc})
				}
			}
		}
	}
	for _, enc := range []string{RefSKI, RefThumbprint, RefBST} {
		cases = append(cases, wss4jCase{name: "ok/encrypt-recipient-" + enc, signer: p.rsa, keyRef: RefBST, encRef: enc})
	}
	cases = append(cases,
		wss4jCase{name: "ok/sign-wsa-to", signer: p.rsa, keyRef: RefBST,
			headers: []xml.Name{{Space: "http://www.w3.org/2005/08/addressing", Local: "To"}}},
		wss4jCase{name: "fail/flipped-body-byte", signer: p.rsa, keyRef: RefBST, tamper: flipAfter("<ns1:Item n=\"")},
		wss4jCase{name: "fail/flipped-body-byte-soap12-ec", signer: p.ec, soap12: true, keyRef: RefIssuerSerial, tamper: flipAfter("<ns1:Item n=\"")},
		wss4jCase{name: "fail/flipped-ciphertext", signer: p.rsa, keyRef: RefBST, encRef: RefIssuerSerial,
			tamper: flipAfter(`</ds:KeyInfo><xenc:CipherData><xenc:CipherValue>`)},
		wss4jCase{name: "fail/flipped-timestamp", signer: p.ec, keyRef: RefSKI, tamper: flipAfter("<wsu:Expires>20")},
	)

	var jobs []testpeer.Job
	for i, c := range cases {
		o := opts(c.signer)
		o.KeyReference, o.SignHeaders = c.keyRef, c.headers
		if c.encRef != "" {
			o.EncryptFor, o.EncryptKeyReference = p.server.Cert, c.encRef
		}
		hdr := ""
		if c.headers != nil {
			hdr = wsaTo
		}
		out, err := Secure(soapEnv(c.soap12, 2048, hdr), o)
		require.NoError(t, err, c.name)
		if c.tamper != nil {
			out = c.tamper(out)
		}
		f := filepath.Join(dir, fmt.Sprintf("%02d.xml", i))
		require.NoError(t, os.WriteFile(f, out, 0o600))
		req := "signed-body,signed-timestamp"
		args := []string{"verify", "--in", f, "--ca", p.caFile}
		if c.keyRef != RefBST {
			args = append(args, "--signer-cert", c.signer.CertFile)
		}
		if c.encRef != "" {
			args = append(args, "--key", p.server.KeyFile, "--cert", p.server.CertFile)
			req += ",encrypted-body"
		}
		jobs = append(jobs, testpeer.Job{ID: c.name, Args: append(args, "--require", req)})
	}

	res := runPeer(t, jar, jobs)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := res[c.name]
			if c.tamper != nil {
				assert.Equal(t, 1, r.Exit, "the peer must reject: %+v", r)
				assert.False(t, r.OK)
				assert.Equal(t, "FAILED_CHECK", r.ErrorCode, "rejected for the wrong reason: %s", r.Error)
				t.Logf("rejected: %s (%s)", r.Error, r.ErrorCode)
				return
			}
			require.Equal(t, 0, r.Exit, "peer: %s (%s)", r.Error, r.ErrorCode)
			assert.True(t, r.OK)
			assert.Equal(t, map[bool]string{false: "1.1", true: "1.2"}[c.soap12], r.SOAPVersion)
			assert.Subset(t, r.SignedParts, []string{"Body", "Timestamp"})
			if c.headers != nil {
				assert.Contains(t, r.SignedParts, "To")
			}
			require.Len(t, r.Signatures, 1)
			assert.Equal(t, c.keyRef, r.Signatures[0].KeyReference)
			if c.encRef != "" {
				assert.Equal(t, []string{"Body"}, r.EncryptedParts)
				require.Len(t, r.Encryption, 1)
				assert.Equal(t, c.encRef, r.Encryption[0].KeyReference)
			}
			t.Logf("actions %v signed %v", r.Actions, r.SignedParts)
		})
	}
}

func keyName(l *testpki.Leaf, p *pki) string {
	if l == p.rsa {
		return "rsa"
	}
	return "ec"
}

// flipAfter returns a tamper function that changes the byte after the first
// occurrence of marker by +1 ('0'→'1', 'A'→'B'), keeping the XML valid.
func flipAfter(marker string) func([]byte) []byte {
	return func(msg []byte) []byte {
		i := bytes.Index(msg, []byte(marker))
		if i < 0 {
			panic("marker not found: " + marker)
		}
		msg = slices.Clone(msg)
		msg[i+len(marker)]++
		return msg
	}
}
