package signer

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/testmime"
)

// newMemAtts holds a parsed package's attachments in memory (the
// trailing signature part excluded: it was put back into the header).
func newMemAtts(p *parsed) *testmime.Parts {
	m := testmime.New()
	for i := 1; i < len(p.bodies)-1; i++ {
		cid := strings.Trim(p.headers[i].Get("Content-ID"), "<>")
		m.Add(&testmime.Part{ID: cid, Head: p.headers[i], Data: p.bodies[i]})
	}
	return m
}

// TestStreamVerifiesWithAttachments: the streamed package, with only its
// trailing signature put back into the header, verifies with the DOM
// engine's attachment support: the XOP infoset digest (xop) and SwA
// Attachment-Content references (swa-content), attachments left as parts.
func TestStreamVerifiesWithAttachments(t *testing.T) {
	p := testPKI(t)
	v := newDOMVerifier(t, p)
	atts := testAtts()
	mtom := mtomRoot(atts[0].cid, atts[1].cid, atts[2].cid)
	for _, tc := range []struct {
		name, mode string
		root       []byte
	}{
		{"ok/xop", AttachXOP, mtom},
		{"ok/swa-content-mtom", AttachSwAContent, mtom},
		{"ok/swa-content-plain", AttachSwAContent, mtomRoot()}, // SwA: no xop:Include
	} {
		mode := tc.mode
		t.Run(tc.name, func(t *testing.T) {
			var in bytes.Buffer
			ct, err := writePackage(&in, tc.root, atts)
			require.NoError(t, err)
			s, err := NewStream(streamOpts(p.rsa, mode))
			require.NoError(t, err)
			var out bytes.Buffer
			require.NoError(t, s.Sign(&out, newStdParts(t, &in, ct)))
			pkg := parsePackage(t, out.Bytes(), s.Boundary())
			root, _ := reassemble(t, pkg, false, nil)
			ma := newMemAtts(pkg)
			res, _, err := v.policy.VerifyAttachments(context.Background(), v.engine, root, ma, time.Now())
			require.NoError(t, err)
			assert.True(t, res.SignedByTrusted(res.Body))
			require.Len(t, res.Attachments, len(atts))
			for i := range res.Attachments {
				assert.True(t, res.AttachmentSignedByTrusted(&res.Attachments[i]), res.Attachments[i].CID)
			}

			ma.ByID[atts[0].cid].Data = append(bytes.Clone(atts[0].data[:10]), 'X')
			_, _, err = v.policy.VerifyAttachments(context.Background(), v.engine, root, ma, time.Now())
			require.Error(t, err, "a changed attachment fails")
		})
	}
}
