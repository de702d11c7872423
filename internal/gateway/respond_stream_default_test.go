package gateway

import (
	"bytes"
	"encoding/base64"
	"io"
	"mime"
	"mime/multipart"
	"net/textproto"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/testpki"
)

// TestRespondStreamingDefault: streaming mode's default format (auto,
// issue 15) is a standard form wherever one exists. A request signed with
// an RSA certificate gets strict-xop (the signature encrypted for it, its
// ciphertext the last part); a request without a signer, or signed with a
// key RSA-OAEP cannot encrypt for (EC), gets buffered mode's standard
// header, which the partner verifies with the XOP infoset and no
// reassembly. An explicit strictXOP keeps its meaning.
func TestRespondStreamingDefault(t *testing.T) {
	k := newSigningPKI(t)
	verify := responseVerifier(t, k)
	atts := [][]byte{bytes.Repeat([]byte("attachment-one "), 5000), {0, 1, 2, 0xff}}
	rsaSigned := func() []byte { return signedRequest(t, k) }
	unsigned := []byte(`<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><m:GetFiles xmlns:m="urn:example:files"/></soapenv:Body></soapenv:Envelope>`)
	for _, tc := range []struct {
		name   string
		strict bool
		// request is made once the gateway runs: the memory replay
		// store refuses messages created before its start-up.
		request func() []byte
		format  func(r *config.Responses)
		// noSignature: the policy does not require a request signature.
		noSignature bool
	}{
		{name: "ok/rsa-requester-strict-xop", request: rsaSigned, strict: true},
		{name: "ok/unsigned-request-buffered", request: func() []byte { return unsigned }, noSignature: true},
		{name: "ok/ec-requester-buffered", request: func() []byte { return signedRequestBy(t, k.gateway) }},
		{name: "ok/explicit-strictXOP", request: rsaSigned, strict: true,
			format: func(r *config.Responses) { r.StrictXOP = true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			more := func(c *config.Config) {
				if tc.noSignature {
					p := c.Policies["partner"]
					p.Require = []string{}
					c.Policies["partner"] = p
				}
			}
			f := newSigningFrontConfig(t, mtomBackend(t, atts, 0).URL, k, func(r *config.Responses) {
				r.Mode = config.ResponseStreaming
				if tc.format != nil {
					tc.format(r)
				}
			}, more)
			resp := post(t, f.URL, tc.request())
			out, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.Equal(t, 200, resp.StatusCode, "%s", out)
			parts := splitParts(t, resp.Header.Get("Content-Type"), out)
			root := string(parts[0].body)
			if tc.strict {
				require.Len(t, parts, 2+len(atts), "root, attachments, encrypted signature")
				last := parts[len(parts)-1]
				assert.Equal(t, signer.CipherPartType, last.header.Get("Content-Type"))
				assert.Contains(t, root, "<xenc:EncryptedData ")
				assert.NotContains(t, root, "<ds:Signature ", "the signature is only in the encrypted last part")
			} else {
				require.Len(t, parts, 1+len(atts), "root and attachments: no trailing part")
				assert.Contains(t, root, "<ds:SignedInfo>")
				assert.NotContains(t, out, []byte("@wssgw>"))
				res, err := verify(inlineXOP(t, parts))
				require.NoError(t, err)
				assert.True(t, res.SignedByTrusted(res.Body))
			}
			for i, a := range atts {
				assert.Equal(t, a, parts[i+1].body, "attachment %d unchanged", i)
			}
			assert.Equal(t, 1.0, f.signingResult(t, metrics.ResponseSigned))
		})
	}
}

// signedRequestBy is signedRequest with another signer.
func signedRequestBy(t *testing.T, l *testpki.Leaf) []byte {
	t.Helper()
	o := signer.DefaultOptions()
	o.Signer, o.Certificate = l.Key, l.Cert
	env := `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><m:GetFiles xmlns:m="urn:example:files"/></soapenv:Body></soapenv:Envelope>`
	out, err := signer.Secure([]byte(env), o)
	require.NoError(t, err)
	return out
}

// pkgPart is one part of a multipart response as the partner reads it.
type pkgPart struct {
	header textproto.MIMEHeader
	body   []byte
}

// splitParts reads a multipart response into its parts.
func splitParts(t *testing.T, contentType string, body []byte) []pkgPart {
	t.Helper()
	_, params, err := mime.ParseMediaType(contentType)
	require.NoError(t, err)
	r := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	var out []pkgPart
	for {
		p, err := r.NextRawPart()
		if err == io.EOF {
			return out
		}
		require.NoError(t, err)
		b, err := io.ReadAll(p)
		require.NoError(t, err)
		out = append(out, pkgPart{header: p.Header, body: b})
	}
}

// inlineXOP is the XOP infoset of a package: the root with each
// xop:Include replaced by the base64 of its part.
func inlineXOP(t *testing.T, parts []pkgPart) []byte {
	t.Helper()
	byCID := map[string][]byte{}
	for _, p := range parts[1:] {
		byCID[strings.Trim(p.header.Get("Content-ID"), "<>")] = p.body
	}
	return xopIncludeRE.ReplaceAllFunc(parts[0].body, func(inc []byte) []byte {
		b, ok := byCID[string(xopIncludeRE.FindSubmatch(inc)[1])]
		require.True(t, ok, "%s names no part", inc)
		return []byte(base64.StdEncoding.EncodeToString(b))
	})
}

// TestRespondStreamingStrictWithoutRSARequester: an explicit strict-xop
// cannot fall back: a requester whose certificate RSA-OAEP cannot encrypt
// for (EC) gets a 502 fault, counted as failed, never an unsigned or
// differently signed package.
func TestRespondStreamingStrictWithoutRSARequester(t *testing.T) {
	k := newSigningPKI(t)
	f := newSigningFront(t, mtomBackend(t, [][]byte{[]byte("data")}, 0).URL, k, func(r *config.Responses) {
		r.Mode, r.StreamFormat = config.ResponseStreaming, config.StreamStrictXOP
	})
	resp := post(t, f.URL, signedRequestBy(t, k.gateway))
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, 502, resp.StatusCode, "%s", out)
	assert.NotContains(t, string(out), "data")
	assert.Equal(t, 1.0, f.signingResult(t, metrics.ResponseFailed))
}
