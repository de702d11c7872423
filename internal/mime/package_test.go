package mime

import (
	"bytes"
	"context"
	"io"
	"net/textproto"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func readPkg(t *testing.T, lim Limits, ct, body string) *Package {
	t.Helper()
	p, err := Read(context.Background(), strings.NewReader(body), ct, lim)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func TestSpool(t *testing.T) {
	lim := testLimits(t)
	big := strings.Repeat("s", int(lim.SpoolThreshold)+1)
	small := strings.Repeat("m", int(lim.SpoolThreshold))
	p := readPkg(t, lim, ctMTOM, pkg(part(hdrRoot, envXOP), att("big", big), att("small", small)))

	b, _ := p.Attachment("big")
	s, _ := p.Attachment("small")
	require.True(t, b.Spooled(), "above the threshold: a file")
	require.False(t, s.Spooled(), "at the threshold: memory")
	assert.Equal(t, big, content(t, b))
	assert.Equal(t, big, content(t, b), "Open gives a fresh reader each time")
	assert.Equal(t, small, content(t, s))

	ents, err := os.ReadDir(lim.SpoolDir)
	require.NoError(t, err)
	require.Len(t, ents, 1, "one private directory per package")
	dir := filepath.Join(lim.SpoolDir, ents[0].Name())
	st, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), st.Mode().Perm())
	files, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, files, 1)
	fi, err := files[0].Info()
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	require.NoError(t, p.Close())
	requireEmptyDir(t, lim.SpoolDir)
	require.NoError(t, p.Close(), "Close is idempotent")
	_, err = b.Open()
	require.Error(t, err, "a spooled part is gone after Close")
}

func TestSpoolNoDirectoryWhenSmall(t *testing.T) {
	lim := testLimits(t)
	p := readPkg(t, lim, ctMTOM, pkg(part(hdrRoot, envXOP), att("a", "tiny")))
	requireEmptyDir(t, lim.SpoolDir)
	require.NoError(t, p.Close())
}

func TestReplace(t *testing.T) {
	lim := testLimits(t)
	tests := []struct {
		name    string
		cid     string
		header  textproto.MIMEHeader
		content string
		want    error
		ctype   string
	}{
		{name: "ok/small-keeps-header", cid: "a", content: "plain", ctype: "application/octet-stream"},
		{name: "ok/large-spools", cid: "a", content: strings.Repeat("L", 1000), ctype: "application/octet-stream"},
		{name: "ok/new-header", cid: "a", header: textproto.MIMEHeader{"Content-Type": {"image/png"}}, content: "png", ctype: "image/png"},
		{name: "ok/new-header-same-id", cid: "a", header: textproto.MIMEHeader{"Content-Id": {"<a>"}, "Content-Type": {"text/plain"}}, content: "t", ctype: "text/plain"},
		{name: "fail/unknown-part", cid: "zz", content: "x", want: ErrMissingPart},
		{name: "fail/header-names-other-part", cid: "a", header: textproto.MIMEHeader{"Content-Id": {"<b>"}}, content: "x", want: ErrMalformed},
		{name: "fail/header-bad-encoding", cid: "a", header: textproto.MIMEHeader{"Content-Transfer-Encoding": {"base64"}}, content: "x", want: ErrEncoding},
		{name: "fail/header-injection", cid: "a", header: textproto.MIMEHeader{"Content-Type": {"text/plain\r\nX: y"}}, content: "x", want: ErrMalformed},
		{name: "fail/too-large", cid: "a", content: strings.Repeat("x", int(lim.MaxPartSize)+1), want: ErrLimit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := strings.Repeat("o", 100) // spooled
			p := readPkg(t, lim, ctMTOM, pkg(part(hdrRoot, envXOP), att("a", old), att("b", "B")))
			a, _ := p.Attachment("a")
			oldPath := a.path
			err := p.Replace(tt.cid, tt.header, strings.NewReader(tt.content))
			if tt.want != nil {
				require.ErrorIs(t, err, tt.want)
				assert.Equal(t, old, content(t, a), "a failed Replace changes nothing")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.content, content(t, a))
			assert.Equal(t, int64(len(tt.content)), a.Size())
			assert.Equal(t, tt.ctype, a.ContentType())
			assert.Equal(t, "a", a.ContentID())
			assert.Equal(t, "<a>", a.Header().Get("Content-Id"))
			_, err = os.Stat(oldPath)
			assert.True(t, os.IsNotExist(err), "the old spool file is removed")
		})
	}
}

func TestReplaceAfterClose(t *testing.T) {
	p := readPkg(t, testLimits(t), ctMTOM, pkg(part(hdrRoot, envXOP), att("a", "x")))
	require.NoError(t, p.Close())
	require.ErrorIs(t, p.Replace("a", nil, strings.NewReader("y")), ErrClosed)
}

func TestWriterRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		ct   string
		body string
	}{
		{"ok/mtom", ctMTOM, pkg(part(hdrRoot, envXOP), att("a@x", strings.Repeat("A", 5000)), att("b@x", ""), att("c@x", "\r\n--"))},
		{"ok/swa-root-without-id", ctSwA, pkg(part("Content-Type: text/xml", "<e/>"), att("a", "1"))},
		{"ok/root-last", ctMTOM, pkg(att("a@x", "1"), part(hdrRoot, envXOP))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lim := testLimits(t)
			p := readPkg(t, lim, tt.ct, tt.body)
			require.NoError(t, p.Replace(p.Attachments[0].ContentID(), nil, strings.NewReader("replaced")))
			newRoot := []byte(strings.Replace(string(p.RootBytes), "/>", "></x>", 1))

			ct, wt := p.Writer(newRoot)
			var out bytes.Buffer
			n, err := wt.WriteTo(&out)
			require.NoError(t, err)
			assert.Equal(t, int64(out.Len()), n)
			assert.NotContains(t, ct, `boundary="B"`, "a fresh boundary")

			q := readPkg(t, lim, ct, out.String())
			assert.Equal(t, string(newRoot), string(q.RootBytes))
			assert.Equal(t, p.Root.ContentType(), q.Root.ContentType())
			if p.Root.ContentID() != "" {
				assert.Equal(t, p.Root.ContentID(), q.Root.ContentID())
			}
			assert.Equal(t, p.Params["type"], q.Params["type"])
			assert.Equal(t, p.Params["start-info"], q.Params["start-info"])
			require.Len(t, q.Attachments, len(p.Attachments))
			for i, a := range p.Attachments {
				b := q.Attachments[i]
				assert.Equal(t, a.ContentID(), b.ContentID())
				assert.Equal(t, a.ContentType(), b.ContentType())
				assert.Equal(t, content(t, a), content(t, b))
			}
			assert.Equal(t, "replaced", content(t, q.Attachments[0]))
		})
	}
}

func TestWriterDropsUnverifiedHeaders(t *testing.T) {
	p := readPkg(t, testLimits(t), ctMTOM, pkg(part(hdrRoot, envXOP),
		part("Content-ID: <a>\r\nContent-Type: image/png\r\nContent-Disposition: attachment; filename=evil\r\nX-Other: 1", "png")))
	_, wt := p.Writer(p.RootBytes)
	var out bytes.Buffer
	_, err := wt.WriteTo(&out)
	require.NoError(t, err)
	assert.NotContains(t, out.String(), "Content-Disposition")
	assert.NotContains(t, out.String(), "X-Other")
	assert.Contains(t, out.String(), "Content-Type: image/png\r\n")
}

func TestWriterFailsWhenSpoolGone(t *testing.T) {
	p := readPkg(t, testLimits(t), ctMTOM, pkg(part(hdrRoot, envXOP), att("a", strings.Repeat("x", 100))))
	require.NoError(t, p.Close())
	_, wt := p.Writer(p.RootBytes)
	_, err := wt.WriteTo(io.Discard)
	require.Error(t, err)
}
