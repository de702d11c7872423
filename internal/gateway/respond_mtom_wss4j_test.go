package gateway

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/testpeer"
)

// TestRespondBufferedMTOMWSS4J has Apache WSS4J (the interop peer, with
// its receiver defaults: expandXopInclude) verify buffered MTOM responses
// as a CXF client would (issue 15): root only, and with attachments whose
// base64 spans many lines; a changed attachment byte must be rejected.
func TestRespondBufferedMTOMWSS4J(t *testing.T) {
	jar := testpeer.Jar(t, "wss4j")
	k := newSigningPKI(t)
	big := bytes.Repeat([]byte{0, 1, 2, 0xfe, 0xff, 'a'}, 5000)
	dir := t.TempDir()
	for _, tc := range []struct {
		name   string
		atts   [][]byte
		tamper bool
	}{
		{name: "ok/root-only"},
		{name: "ok/attachments", atts: [][]byte{big, []byte("small")}},
		{name: "fail/tampered-attachment", atts: [][]byte{big, []byte("small")}, tamper: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newSigningFront(t, mtomBackend(t, tc.atts, 0).URL, k, nil)
			resp := post(t, f.URL, signedRequest(t, k))
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
			res := wss4jVerify(t, jar, "verify", "--mime", file, "--content-type", resp.Header.Get("Content-Type"),
				"--ca", k.caFile, "--require", "signed-body,signed-timestamp")
			if tc.tamper {
				assert.False(t, res.OK, "WSS4J must reject a changed attachment")
				assert.Equal(t, "FAILED_CHECK", res.ErrorCode, "%s", res.Error)
				return
			}
			require.True(t, res.OK, "WSS4J: %s (%s)", res.Error, res.ErrorCode)
		})
	}
}

// TestRespondBufferedSwAWSS4J has the WSS4J peer verify a buffered SwA
// response: one cid: Reference per part with the
// Attachment-Content-Signature-Transform; a changed text or XML part must
// be rejected.
func TestRespondBufferedSwAWSS4J(t *testing.T) {
	jar := testpeer.Jar(t, "wss4j")
	k := newSigningPKI(t)
	f := newSigningFront(t, swaBackend(t).URL, k, nil)
	resp := post(t, f.URL, signedRequest(t, k))
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode, "%s", out)
	dir := t.TempDir()
	for _, tc := range []struct{ name, old, new string }{
		{name: "ok/swa"},
		{name: "fail/text", old: "line 2", new: "line 3"},
		{name: "fail/xml", old: "a='1'", new: "a='2'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := out
			if tc.old != "" {
				msg = bytes.Replace(out, []byte(tc.old), []byte(tc.new), 1)
			}
			file := filepath.Join(dir, strings.ReplaceAll(tc.name, "/", "-")+".mime")
			require.NoError(t, os.WriteFile(file, msg, 0o600))
			res := wss4jVerify(t, jar, "verify", "--mime", file, "--content-type", resp.Header.Get("Content-Type"),
				"--ca", k.caFile, "--require", "signed-body,signed-timestamp")
			if tc.old != "" {
				assert.False(t, res.OK, "WSS4J must reject a changed part")
				assert.Equal(t, "FAILED_CHECK", res.ErrorCode, "%s", res.Error)
				return
			}
			require.True(t, res.OK, "WSS4J: %s (%s)", res.Error, res.ErrorCode)
		})
	}
}

// wss4jResult is the part of the peer's JSON line the tests read.
type wss4jResult struct {
	OK        bool   `json:"ok"`
	Error     string `json:"error"`
	ErrorCode string `json:"errorCode"`
}

// wss4jVerify runs one peer command; its exit status is in the JSON.
func wss4jVerify(t *testing.T, jar string, args ...string) wss4jResult {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command("java", append([]string{"-jar", jar}, args...)...)
	cmd.Stderr = &stderr
	out, _ := cmd.Output() // exit 1 on a rejection: the JSON says why
	var r wss4jResult
	require.NoError(t, json.Unmarshal(bytes.TrimSpace(out), &r), "peer output %q, stderr %s", out, stderr.String())
	return r
}
