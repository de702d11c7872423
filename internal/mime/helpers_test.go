package mime

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const (
	ctMTOM = `multipart/related; type="application/xop+xml"; boundary="B"; start="<root@x>"; start-info="application/soap+xml"`
	ctSwA  = `multipart/related; type="text/xml"; boundary="B"`

	hdrRoot = "Content-Type: application/xop+xml; charset=UTF-8; type=\"application/soap+xml\"\r\nContent-ID: <root@x>"
	hdrSwA  = "Content-Type: text/xml; charset=UTF-8\r\nContent-ID: <root@x>"
	envXOP  = `<s:Envelope xmlns:s="http://www.w3.org/2003/05/soap-envelope"><s:Body/></s:Envelope>`
)

// part joins a header block (without its final blank line) and a body.
func part(hdr, body string) string { return hdr + "\r\n\r\n" + body }

// att is an attachment part with a Content-ID.
func att(cid, body string) string {
	return part("Content-Type: application/octet-stream\r\nContent-ID: <"+cid+">", body)
}

// pkg assembles parts with the boundary B and a close delimiter.
func pkg(parts ...string) string {
	return "--B\r\n" + strings.Join(parts, "\r\n--B\r\n") + "\r\n--B--\r\n"
}

// testLimits are small so that limit tests stay small.
func testLimits(t testing.TB) Limits {
	l := DefaultLimits()
	l.MaxParts = 5
	l.MaxHeaderBytes = 512
	l.MaxRootSize = 4 << 10
	l.MaxPartSize = 64 << 10
	l.MaxTotalSize = 256 << 10
	l.SpoolThreshold = 16
	l.SpoolDir = t.TempDir()
	return l
}

// requireEmptyDir asserts that nothing is left in the spool parent.
func requireEmptyDir(t testing.TB, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, ents, "spool left behind in %s", dir)
}
