package mime

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRead(t *testing.T) {
	big := strings.Repeat("z", 65<<10)
	tests := []struct {
		name  string
		ct    string
		body  string
		lim   func(*Limits)
		want  error // nil: success
		check func(t *testing.T, p *Package)
	}{
		{name: "ok/mtom", ct: ctMTOM, body: pkg(part(hdrRoot, envXOP), att("a@x", "AAAA"), att("b@x", strings.Repeat("b", 100))),
			check: func(t *testing.T, p *Package) {
				assert.Equal(t, envXOP, string(p.RootBytes))
				assert.Equal(t, "root@x", p.Root.ContentID())
				require.Len(t, p.Attachments, 2)
				assert.Equal(t, "a@x", p.Attachments[0].ContentID())
				assert.Equal(t, "application/octet-stream", p.Attachments[0].ContentType())
				assert.Equal(t, int64(100), p.Attachments[1].Size())
				assert.True(t, p.IsXOP())
				assert.Equal(t, "root@x", p.Params["start"])
			}},
		{name: "ok/swa-first-part-is-root", ct: ctSwA, body: pkg(part("Content-Type: text/xml", "<e/>"), att("a", "x")),
			check: func(t *testing.T, p *Package) {
				assert.Equal(t, "<e/>", string(p.RootBytes))
				assert.Equal(t, "", p.Root.ContentID())
				assert.False(t, p.IsXOP())
			}},
		{name: "ok/root-after-attachment", ct: ctMTOM, body: pkg(att("a@x", "1"), part(hdrRoot, envXOP)),
			check: func(t *testing.T, p *Package) {
				assert.Equal(t, envXOP, string(p.RootBytes))
				require.Len(t, p.Attachments, 1)
			}},
		{name: "ok/preamble-padding-epilogue", ct: ctMTOM,
			body:  "preamble\r\n--B \t\r\n" + part(hdrRoot, envXOP) + "\r\n--B\r\n" + att("a@x", "1") + "\r\n--B--  \r\nepilogue",
			check: func(t *testing.T, p *Package) { assert.Equal(t, envXOP, string(p.RootBytes)) }},
		{name: "ok/no-trailing-crlf", ct: ctMTOM, body: strings.TrimSuffix(pkg(part(hdrRoot, envXOP)), "\r\n")},
		{name: "ok/boundary-look-alikes-in-content", ct: ctMTOM,
			body: pkg(part(hdrRoot, envXOP), att("a@x", "--B\r\n-B\r\n--\r--B\n--B\r\r\n-")),
			check: func(t *testing.T, p *Package) {
				assert.Equal(t, "--B\r\n-B\r\n--\r--B\n--B\r\r\n-", content(t, p.Attachments[0]))
			}},
		{name: "ok/empty-content", ct: ctMTOM, body: pkg(part(hdrRoot, envXOP), att("a@x", "")),
			check: func(t *testing.T, p *Package) { assert.Equal(t, int64(0), p.Attachments[0].Size()) }},
		{name: "ok/identity-encodings", ct: ctMTOM, body: pkg(part(hdrRoot+"\r\nContent-Transfer-Encoding: 8bit", envXOP),
			part("Content-ID: <a@x>\r\nContent-Transfer-Encoding: BINARY", "1"), part("Content-ID: <b@x>\r\nContent-Transfer-Encoding: 7bit", "2"))},
		{name: "ok/start-without-brackets", ct: strings.Replace(ctMTOM, `"<root@x>"`, `"root@x"`, 1), body: pkg(part(hdrRoot, envXOP))},
		{name: "ok/soap11-mtom", ct: `multipart/related; type="application/xop+xml"; boundary=B; start-info="text/xml"`,
			body: pkg(part(`Content-Type: application/xop+xml; type="text/xml"`, "<e/>"))},

		{name: "ok/total-size-exact", ct: ctMTOM, body: pkg(part(hdrRoot, envXOP), att("a@x", "1")),
			lim: func(l *Limits) { l.MaxTotalSize = int64(len(pkg(part(hdrRoot, envXOP), att("a@x", "1")))) }},
		// The CRLF after the close delimiter is never read, so the limit
		// bites only when the delimiter itself does not fit.
		{name: "fail/total-size-short-of-close-delimiter", ct: ctMTOM, body: pkg(part(hdrRoot, envXOP), att("a@x", "1")),
			lim: func(l *Limits) { l.MaxTotalSize = int64(len(pkg(part(hdrRoot, envXOP), att("a@x", "1")))) - 3 }, want: ErrLimit},

		{name: "fail/not-multipart", ct: "text/xml", body: "<e/>", want: ErrMalformed},
		{name: "fail/no-boundary-param", ct: `multipart/related; type="text/xml"`, body: pkg(part(hdrSwA, "<e/>")), want: ErrMalformed},
		{name: "fail/empty-boundary", ct: `multipart/related; type="text/xml"; boundary=""`, body: "", want: ErrMalformed},
		{name: "fail/boundary-too-long", ct: `multipart/related; type="text/xml"; boundary="` + strings.Repeat("b", 71) + `"`, body: "", want: ErrMalformed},
		{name: "fail/boundary-bad-char", ct: `multipart/related; type="text/xml"; boundary="a\\b"`, body: "", want: ErrMalformed},
		{name: "fail/no-type-param", ct: `multipart/related; boundary=B`, body: pkg(part(hdrSwA, "<e/>")), want: ErrMalformed},
		{name: "fail/unknown-type-param", ct: `multipart/related; type="text/html"; boundary=B`, body: pkg(part(hdrSwA, "<e/>")), want: ErrMalformed},
		{name: "fail/bad-content-type", ct: `multipart/related; type=`, body: "", want: ErrMalformed},
		{name: "fail/duplicate-content-id", ct: ctMTOM, body: pkg(part(hdrRoot, envXOP), att("a@x", "1"), att("a@x", "2")), want: ErrDuplicateID},
		{name: "fail/duplicate-content-id-case", ct: ctMTOM, body: pkg(part(hdrRoot, envXOP), att("a@x", "1"), att("A@X", "2")), want: ErrDuplicateID},
		{name: "fail/attachment-reuses-root-id", ct: ctMTOM, body: pkg(part(hdrRoot, envXOP), att("root@x", "1")), want: ErrDuplicateID},
		{name: "fail/missing-start-part", ct: ctMTOM, body: pkg(att("a@x", "1"), att("b@x", "2")), want: ErrMissingPart},
		{name: "fail/root-type-mismatch", ct: ctMTOM, body: pkg(part("Content-Type: text/xml\r\nContent-ID: <root@x>", envXOP)), want: ErrMalformed},
		{name: "fail/xop-root-without-type", ct: ctMTOM, body: pkg(part("Content-Type: application/xop+xml\r\nContent-ID: <root@x>", envXOP)), want: ErrMalformed},
		{name: "fail/start-info-mismatch", ct: strings.Replace(ctMTOM, `start-info="application/soap+xml"`, `start-info="text/xml"`, 1), body: pkg(part(hdrRoot, envXOP)), want: ErrMalformed},
		{name: "fail/root-without-content-type", ct: ctSwA, body: pkg(part("Content-ID: <r>", "<e/>")), want: ErrMalformed},
		{name: "fail/attachment-without-content-id", ct: ctMTOM, body: pkg(part(hdrRoot, envXOP), part("Content-Type: image/png", "1")), want: ErrMalformed},
		{name: "fail/content-id-without-brackets", ct: ctMTOM, body: pkg(part(hdrRoot, envXOP), part("Content-ID: a@x", "1")), want: ErrMalformed},
		{name: "fail/two-content-types", ct: ctMTOM, body: pkg(part(hdrRoot, envXOP), part("Content-ID: <a@x>\r\nContent-Type: a/b\r\nContent-Type: c/d", "1")), want: ErrMalformed},
		{name: "fail/bare-lf-in-header", ct: ctMTOM, body: pkg(part(hdrRoot, envXOP), part("Content-ID: <a@x>\nContent-Type: a/b", "1")), want: ErrMalformed},
		{name: "fail/line-starts-with-boundary", ct: ctMTOM, body: pkg(part(hdrRoot, envXOP), att("a@x", "x\r\n--BX\r\ny")), want: ErrMalformed},
		{name: "fail/base64", ct: ctMTOM, body: pkg(part(hdrRoot, envXOP), part("Content-ID: <a@x>\r\nContent-Transfer-Encoding: base64", "QUJD")), want: ErrEncoding},
		{name: "fail/quoted-printable", ct: ctMTOM, body: pkg(part(hdrRoot, envXOP), part("Content-ID: <a@x>\r\nContent-Transfer-Encoding: quoted-printable", "=41")), want: ErrEncoding},
		{name: "fail/no-parts", ct: ctMTOM, body: "--B--\r\n", want: ErrMalformed},
		{name: "fail/oversize-part", ct: ctMTOM, body: pkg(part(hdrRoot, envXOP), att("a@x", big)), want: ErrLimit},
		{name: "fail/oversize-root", ct: ctMTOM, body: pkg(part(hdrRoot, strings.Repeat("r", 4<<10+1))), want: ErrLimit},
		{name: "fail/oversize-header", ct: ctMTOM, body: pkg(part(hdrRoot+"\r\nX-Pad: "+strings.Repeat("p", 512), envXOP)), want: ErrLimit},
		{name: "fail/oversize-total", ct: ctMTOM, lim: func(l *Limits) { l.MaxTotalSize = 200 },
			body: pkg(part(hdrRoot, envXOP), att("a@x", strings.Repeat("a", 200))), want: ErrLimit},
		{name: "fail/too-many-parts", ct: ctMTOM, body: pkg(part(hdrRoot, envXOP), att("1", ""), att("2", ""), att("3", ""), att("4", ""), att("5", "")), want: ErrLimit},
		{name: "fail/preamble-too-long", ct: ctMTOM, body: strings.Repeat("p", 600) + "\r\n" + pkg(part(hdrRoot, envXOP)), want: ErrLimit},
		{name: "fail/empty-body", ct: ctMTOM, body: "", want: ErrTruncated},
		{name: "fail/no-delimiter", ct: ctMTOM, body: "hello", want: ErrTruncated},
		{name: "fail/truncated-in-content", ct: ctMTOM, body: strings.TrimSuffix(pkg(part(hdrRoot, envXOP), att("a@x", big[:100])), "\r\n--B--\r\n"), want: ErrTruncated},
		{name: "fail/truncated-in-close-delimiter", ct: ctMTOM, body: strings.TrimSuffix(pkg(part(hdrRoot, envXOP)), "-\r\n"), want: ErrTruncated},
		{name: "fail/truncated-in-header", ct: ctMTOM, body: "--B\r\nContent-Type: text/xml\r\n", want: ErrTruncated},
		{name: "fail/truncated-after-delimiter", ct: ctMTOM, body: pkg(part(hdrRoot, envXOP))[:len(pkg(part(hdrRoot, envXOP)))-4], want: ErrTruncated},
		{name: "fail/spooled-then-truncated", ct: ctMTOM, body: "--B\r\n" + part(hdrRoot, envXOP) + "\r\n--B\r\n" + att("a@x", big[:30000]), want: ErrTruncated},
		{name: "fail/spooled-then-duplicate", ct: ctMTOM, body: pkg(part(hdrRoot, envXOP), att("a@x", big[:30000]), att("a@x", "")), want: ErrDuplicateID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lim := testLimits(t)
			if tt.lim != nil {
				tt.lim(&lim)
			}
			// Each input is read whole and one byte at a time, so that every
			// delimiter also arrives split across reads.
			for _, r := range []io.Reader{strings.NewReader(tt.body), iotest.OneByteReader(strings.NewReader(tt.body))} {
				p, err := Read(context.Background(), r, tt.ct, lim)
				if tt.want != nil {
					require.ErrorIs(t, err, tt.want)
					t.Log(err)
					require.Nil(t, p)
					requireEmptyDir(t, lim.SpoolDir)
					continue
				}
				require.NoError(t, err)
				if tt.check != nil {
					tt.check(t, p)
				}
				require.NoError(t, p.Close())
				requireEmptyDir(t, lim.SpoolDir)
			}
		})
	}
}

// content reads a part's whole content.
func content(t testing.TB, p *Part) string {
	t.Helper()
	rc, err := p.Open()
	require.NoError(t, err)
	defer rc.Close()
	b, err := io.ReadAll(rc)
	require.NoError(t, err)
	return string(b)
}

func TestReadClientAbort(t *testing.T) {
	lim := testLimits(t)
	body := "--B\r\n" + part(hdrRoot, envXOP) + "\r\n--B\r\n" + att("a@x", strings.Repeat("a", 1000))
	reset := errors.New("connection reset by peer")
	_, err := Read(context.Background(), iotest.DataErrReader(io.MultiReader(strings.NewReader(body), iotest.ErrReader(reset))), ctMTOM, lim)
	require.ErrorIs(t, err, ErrTruncated)
	require.ErrorIs(t, err, reset, "the cause stays visible")
	requireEmptyDir(t, lim.SpoolDir)
}

func TestReadContextCancel(t *testing.T) {
	lim := testLimits(t)
	ctx, cancel := context.WithCancel(context.Background())
	body := pkg(part(hdrRoot, envXOP), att("a@x", strings.Repeat("a", 50000)))
	// The reader cancels ctx once part of the attachment has been read.
	r := &cancelAfter{r: strings.NewReader(body), n: 10000, cancel: cancel}
	_, err := Read(ctx, iotest.HalfReader(r), ctMTOM, lim)
	require.ErrorIs(t, err, context.Canceled)
	requireEmptyDir(t, lim.SpoolDir)
}

type cancelAfter struct {
	r      io.Reader
	n      int
	cancel func()
}

func (c *cancelAfter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if c.n -= n; c.n <= 0 {
		c.cancel()
	}
	return n, err
}

// TestReadRemovesSpoolOnError fails a package after an attachment was
// spooled, and checks the spool existed and is gone.
func TestReadRemovesSpoolOnError(t *testing.T) {
	lim := testLimits(t)
	body := "--B\r\n" + part(hdrRoot, envXOP) + "\r\n--B\r\n" + att("a@x", strings.Repeat("a", 5000)) +
		"\r\n--B\r\n" + att("b@x", "cut")
	spooled := 0
	atEnd := func() {
		ents, err := os.ReadDir(lim.SpoolDir)
		require.NoError(t, err)
		spooled = len(ents)
	}
	_, err := Read(context.Background(), io.MultiReader(strings.NewReader(body), &hook{fn: atEnd}), ctMTOM, lim)
	require.ErrorIs(t, err, ErrTruncated)
	require.Equal(t, 1, spooled, "the first attachment was spooled before the failure")
	requireEmptyDir(t, lim.SpoolDir)
}

// hook calls fn when it is read, then reports the end of the input.
type hook struct{ fn func() }

func (h *hook) Read([]byte) (int, error) {
	h.fn()
	return 0, io.EOF
}
