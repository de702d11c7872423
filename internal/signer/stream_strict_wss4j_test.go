package signer

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/testpeer"
)

// TestStreamStrictWSS4J has Apache WSS4J (the peer, with a stock
// receiver's settings: no reassembly of a trailing part, expandXopInclude
// on) verify strictXOP streamed responses as they come off the wire: it
// decrypts the ds:Signature from the last part (an xop:Include in a
// CipherValue, which WSS4J resolves itself) and then checks it (issue 15).
// MTOM packages in xop and swa-content mode and a plain SwA package; a
// changed attachment byte must be rejected.
func TestStreamStrictWSS4J(t *testing.T) {
	jar := testpeer.Jar(t, "wss4j")
	p := testPKI(t)
	dir := t.TempDir()
	mtomAtts := testAtts()[:2]
	cids := []string{mtomAtts[0].cid, mtomAtts[1].cid}
	cases := []struct {
		name   string
		mode   string
		root   []byte
		atts   []att
		tamper func([]byte) []byte
	}{
		{name: "ok/mtom-xop", mode: AttachXOP, root: mtomRoot(cids...), atts: mtomAtts},
		{name: "ok/mtom-swa-content", mode: AttachSwAContent, root: mtomRoot(cids...), atts: mtomAtts},
		{name: "ok/swa-content", mode: AttachSwAContent, root: mtomRoot(), atts: swaAtts()},
		{name: "ok/swa-complete", mode: AttachSwAComplete, root: mtomRoot(), atts: swaAtts()},
		{name: "fail/mtom-xop-attachment", mode: AttachXOP, root: mtomRoot(cids...), atts: mtomAtts, tamper: replace("%PDF-1.7", "%PDF-1.6")},
		{name: "fail/mtom-swa-content-attachment", mode: AttachSwAContent, root: mtomRoot(cids...), atts: mtomAtts, tamper: replace("%PDF-1.7", "%PDF-1.6")},
		{name: "fail/swa-content-text", mode: AttachSwAContent, root: mtomRoot(), atts: swaAtts(), tamper: replace("line 2", "line 3")},
	}
	var jobs []testpeer.Job
	for i, c := range cases {
		var in bytes.Buffer
		ct, err := writePackage(&in, c.root, c.atts)
		require.NoError(t, err)
		o := streamOpts(p.rsa, c.mode)
		o.StrictXOP, o.EncryptFor = true, p.server.Cert
		s, err := NewStream(o)
		require.NoError(t, err)
		var out bytes.Buffer
		require.NoError(t, s.Sign(&out, newStdParts(t, &in, ct)), c.name)
		msg := out.Bytes()
		if c.tamper != nil {
			msg = c.tamper(msg)
		}
		f := filepath.Join(dir, fmt.Sprintf("%02d.mime", i))
		require.NoError(t, os.WriteFile(f, msg, 0o600))
		jobs = append(jobs, testpeer.Job{ID: c.name, Args: []string{"verify", "--mime", f, "--content-type", mtomType(s.Boundary()),
			"--ca", p.caFile, "--key", p.server.KeyFile, "--cert", p.server.CertFile,
			"--require", "signed-body,signed-timestamp,encryption"}})
	}
	res := runPeer(t, jar, jobs)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := res[c.name]
			if strings.HasPrefix(c.name, "fail/") {
				assert.Equal(t, 1, r.Exit, "the peer must reject: %+v", r)
				assert.Equal(t, "FAILED_CHECK", r.ErrorCode, "rejected for the wrong reason: %s", r.Error)
				return
			}
			require.Equal(t, 0, r.Exit, "peer: %s (%s)", r.Error, r.ErrorCode)
			assert.True(t, r.OK)
		})
	}
}
