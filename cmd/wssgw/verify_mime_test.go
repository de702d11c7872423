package main

import (
	"bytes"
	"mime/multipart"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	wcrypto "github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/testmime"
)

// streamedResponse is what the gateway sends in streaming mode: an MTOM
// package signed by the partner key (trusted by the test CA), its
// ds:Signature content in the last part.
func streamedResponse(t *testing.T, p *cliPKI, strict bool) (contentType string, pkg []byte) {
	t.Helper()
	in, boundary := testmime.File(t, strings.Repeat("\x00\x01binary", 1000))

	kp, err := wcrypto.LoadKeyPair(wcrypto.KeyFileOptions{CertFile: p.partnerCrt, KeyFile: p.partnerKey})
	require.NoError(t, err)
	o := signer.StreamOptions{Options: signer.DefaultOptions()}
	o.Signer, o.Certificate = kp.Signer, kp.Certificate
	if strict {
		certs, err := wcrypto.LoadCertificates(p.gatewayCrt)
		require.NoError(t, err)
		o.StrictXOP, o.EncryptFor = true, certs[0]
	}
	s, err := signer.NewStream(o)
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, s.Sign(&out, &testmime.RawParts{R: multipart.NewReader(in, boundary)}))
	return testmime.ContentType(s.Boundary()), out.Bytes()
}

// TestVerifyStreamedResponse: `wssgw verify --content-type` puts a
// streamed response's trailing signature back (decrypting it with --key in
// the strict variant) and verifies it with its attachments.
func TestVerifyStreamedResponse(t *testing.T) {
	p := newCLIPKI(t)
	gatewayKey := filepath.Join(p.dir, "gateway.key")
	tests := []struct {
		name   string
		strict bool
		args   []string
		tamper bool
		want   string // in stderr when it fails
	}{
		{name: "ok/plain"},
		{name: "ok/strict", strict: true, args: []string{"--key", gatewayKey}},
		{name: "fail/strict-without-key", strict: true, want: "--key"},
		{name: "fail/strict-ec-key", strict: true, args: []string{"--key", p.partnerKey}, want: "cannot decrypt"},
		{name: "fail/tampered-attachment", tamper: true, want: "rejected"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ct, pkg := streamedResponse(t, p, tc.strict)
			if tc.tamper {
				pkg = bytes.Replace(pkg, []byte("binary\x00"), []byte("Binary\x00"), 1)
			}
			f := p.write(t, "response.mime", pkg)
			args := append([]string{"verify", "-c", p.config, "--policy", "signed", "--content-type", ct, f}, tc.args...)
			out, stderr, err := runCLI(t, nil, args...)
			if tc.want != "" {
				require.Error(t, err)
				assert.Contains(t, stderr+errString(err), tc.want)
				return
			}
			require.NoError(t, err, stderr)
			assert.Contains(t, out, "urn:x", "the plaintext root is printed")
			assert.Contains(t, out, "Body")
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
