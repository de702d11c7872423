package gateway

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/testpeer"
)

// TestRespondStreamingDefaultWSS4J has Apache WSS4J (the interop peer,
// with CXF's attachment handling: a part WSS4J inlines is taken out of the
// message) verify what streaming mode sends by default (issue 15), as it
// comes off the wire, without reassembly: strict-xop for a signed RSA
// requester, which decrypts the signature with its own key, in xop and
// swa-content mode (the case that failed in CXF with "Attachment not
// found"); buffered mode's standard header for an unsigned request. A
// changed attachment byte must be rejected, and so is the trailing format
// (streamFormat trailing), which only a reassembling receiver verifies.
func TestRespondStreamingDefaultWSS4J(t *testing.T) {
	jar := testpeer.Jar(t, "wss4j")
	k := newSigningPKI(t)
	big := bytes.Repeat([]byte{0, 1, 2, 0xfe, 0xff, 'a'}, 5000)
	unsigned := []byte(`<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><m:GetFiles xmlns:m="urn:example:files"/></soapenv:Body></soapenv:Envelope>`)
	dir := t.TempDir()
	for _, tc := range []struct {
		name     string
		attach   string
		unsigned bool
		tamper   bool
		format   string
	}{
		{name: "ok/strict-xop"},
		{name: "ok/strict-xop-swa-content", attach: config.AttachSwAContent},
		{name: "ok/unsigned-request-buffered", unsigned: true},
		{name: "fail/strict-xop-tampered-attachment", tamper: true},
		{name: "fail/unsigned-request-buffered-tampered-attachment", unsigned: true, tamper: true},
		// The trailing format is not XOP (ds:Signature is not
		// base64Binary): a stock receiver inlines the last part as base64
		// text and finds no SignedInfo.
		{name: "fail/trailing-stock-receiver", format: config.StreamTrailing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			more := func(c *config.Config) {
				if tc.unsigned {
					p := c.Policies["partner"]
					p.Require = []string{}
					c.Policies["partner"] = p
				}
			}
			f := newSigningFrontConfig(t, mtomBackend(t, [][]byte{big, []byte("small")}, 0).URL, k, func(r *config.Responses) {
				r.Mode = config.ResponseStreaming
				if tc.attach != "" {
					r.Attachments = tc.attach
				}
				if tc.format != "" {
					r.StreamFormat = tc.format
				}
			}, more)
			req := signedRequest(t, k)
			if tc.unsigned {
				req = unsigned
			}
			resp := post(t, f.URL, req)
			out, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.Equal(t, 200, resp.StatusCode, "%s", out)
			if tc.tamper {
				i := bytes.Index(out, []byte("small"))
				require.Positive(t, i)
				out[i] = 'S'
			}
			file := filepath.Join(dir, strings.ReplaceAll(tc.name, "/", "-")+".mime")
			require.NoError(t, os.WriteFile(file, out, 0o600))
			args := []string{"verify", "--mime", file, "--content-type", resp.Header.Get("Content-Type"),
				"--ca", k.caFile, "--require", "signed-body,signed-timestamp"}
			if !tc.unsigned {
				args = append(args, "--key", k.partner.KeyFile, "--cert", k.partner.CertFile)
			}
			res := wss4jVerify(t, jar, args...)
			if tc.format == config.StreamTrailing {
				assert.False(t, res.OK, "a stock receiver cannot verify the trailing format")
				t.Logf("WSS4J: %s (%s)", res.Error, res.ErrorCode)
				return
			}
			if tc.tamper {
				assert.False(t, res.OK, "WSS4J must reject a changed attachment")
				assert.Equal(t, "FAILED_CHECK", res.ErrorCode, "%s", res.Error)
				return
			}
			require.True(t, res.OK, "WSS4J: %s (%s)", res.Error, res.ErrorCode)
		})
	}
}
