package signer

import (
	"bytes"
	"context"
	"io"
	"net/textproto"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/wss"
)

// memAtts is an in-memory wss.Attachments over a parsed package's
// attachments (the trailing signature part excluded: it was put back
// into the header).
type memAtts struct {
	ids   []string
	parts map[string]*memAtt
}

type memAtt struct {
	cid  string
	h    textproto.MIMEHeader
	data []byte
}

func (a *memAtt) ContentID() string            { return a.cid }
func (a *memAtt) ContentType() string          { return a.h.Get("Content-Type") }
func (a *memAtt) Header() textproto.MIMEHeader { return a.h }
func (a *memAtt) Size() int64                  { return int64(len(a.data)) }
func (a *memAtt) Open() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(a.data)), nil }

func newMemAtts(p *parsed) *memAtts {
	m := &memAtts{parts: map[string]*memAtt{}}
	for i := 1; i < len(p.bodies)-1; i++ {
		cid := strings.Trim(p.headers[i].Get("Content-ID"), "<>")
		m.ids = append(m.ids, cid)
		m.parts[cid] = &memAtt{cid: cid, h: p.headers[i], data: p.bodies[i]}
	}
	return m
}

func (m *memAtts) IDs() []string { return m.ids }

func (m *memAtts) Attachment(cid string) (wss.Attachment, bool) {
	a, ok := m.parts[cid]
	if !ok {
		return nil, false
	}
	return a, true
}

func (m *memAtts) Replace(cid string, h textproto.MIMEHeader, r io.Reader) error {
	b, err := io.ReadAll(r)
	m.parts[cid] = &memAtt{cid: cid, h: h, data: b}
	return err
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

			ma.parts[atts[0].cid].data = append(bytes.Clone(atts[0].data[:10]), 'X')
			_, _, err = v.policy.VerifyAttachments(context.Background(), v.engine, root, ma, time.Now())
			require.Error(t, err, "a changed attachment fails")
		})
	}
}
