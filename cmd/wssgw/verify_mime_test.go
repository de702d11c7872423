package main

import (
	"bytes"
	"io"
	"mime"
	"mime/multipart"
	"net/textproto"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	wcrypto "github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/signer"
)

// streamedResponse is what the gateway sends in streaming mode: an MTOM
// package signed by the partner key (trusted by the test CA), its
// ds:Signature content in the last part.
func streamedResponse(t *testing.T, p *cliPKI, strict bool) (contentType string, pkg []byte) {
	t.Helper()
	var in bytes.Buffer
	mw := multipart.NewWriter(&in)
	part := func(ct, cid, body string) {
		h := textproto.MIMEHeader{}
		h.Set("Content-Type", ct)
		h.Set("Content-ID", "<"+cid+">")
		w, err := mw.CreatePart(h)
		require.NoError(t, err)
		_, _ = io.WriteString(w, body)
	}
	part(`application/xop+xml; charset=UTF-8; type="text/xml"`, "root@x", `<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>`+
		`<m:File xmlns:m="urn:x"><xop:Include xmlns:xop="http://www.w3.org/2004/08/xop/include" href="cid:file@x"/></m:File></soap:Body></soap:Envelope>`)
	part("application/octet-stream", "file@x", strings.Repeat("\x00\x01binary", 1000))
	require.NoError(t, mw.Close())

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
	require.NoError(t, s.Sign(&out, &stdParts{multipart.NewReader(&in, mw.Boundary())}))
	ct := mime.FormatMediaType("multipart/related", map[string]string{
		"type": "application/xop+xml", "start": "<root@x>", "start-info": "text/xml", "boundary": s.Boundary(),
	})
	return ct, out.Bytes()
}

type stdParts struct{ r *multipart.Reader }

func (p *stdParts) Next() (textproto.MIMEHeader, io.Reader, error) {
	part, err := p.r.NextRawPart()
	if err != nil {
		return nil, nil, err
	}
	return part.Header, part, nil
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
