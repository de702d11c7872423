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

// TestStreamWSS4J has Apache WSS4J (the peer) verify streamed SwA
// responses with text and XML parts in both SwA modes, the trailing
// signature part put back by the peer: an independent implementation of
// the transforms the signer and the DOM engine share (internal/swa). A
// changed text byte, and in Complete mode a changed covered header, must
// be rejected.
func TestStreamWSS4J(t *testing.T) {
	jar := testpeer.Jar(t, "wss4j")
	p := testPKI(t)
	dir := t.TempDir()
	type peerCase struct {
		name   string
		mode   string
		tamper func([]byte) []byte
	}
	cases := []peerCase{
		{name: "ok/swa-content", mode: AttachSwAContent},
		{name: "ok/swa-complete", mode: AttachSwAComplete},
		{name: "ok/swa-content-header-not-covered", mode: AttachSwAContent, tamper: replace("text/plain; charset=UTF-8", "text/plain; charset=UTF-7")},
		{name: "fail/swa-content-text", mode: AttachSwAContent, tamper: replace("line 2", "line 3")},
		{name: "fail/swa-complete-xml", mode: AttachSwAComplete, tamper: replace("n='1'", "n='2'")},
		{name: "fail/swa-complete-header", mode: AttachSwAComplete, tamper: replace("text/plain; charset=UTF-8", "text/plain; charset=UTF-7")},
	}
	var jobs []testpeer.Job
	for i, c := range cases {
		s, out := signSwA(t, p, c.mode, swaAtts())
		if c.tamper != nil {
			out = c.tamper(out)
		}
		f := filepath.Join(dir, fmt.Sprintf("%02d.mime", i))
		require.NoError(t, os.WriteFile(f, out, 0o600))
		jobs = append(jobs, testpeer.Job{ID: c.name, Args: []string{"verify", "--mime", f, "--content-type", mtomType(s.Boundary()),
			"--trailing-signature", "--ca", p.caFile, "--require", "signed-body,signed-timestamp"}})
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

// replace returns a tamper function that replaces the one occurrence of
// old in the package.
func replace(old, with string) func([]byte) []byte {
	return func(b []byte) []byte {
		if bytes.Count(b, []byte(old)) != 1 {
			panic("not exactly one " + old)
		}
		return bytes.Replace(b, []byte(old), []byte(with), 1)
	}
}
