package signer

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/mime"
)

// TestSetPackage: an MTOM package is signed through XOP (its parts opened
// by cid), an SwA package through one cid: Reference per part.
func TestSetPackage(t *testing.T) {
	const part = "\r\n--B\r\nContent-Type: image/png\r\nContent-ID: <a@x>\r\n\r\nPNG\r\n--B--\r\n"
	tests := map[string]struct {
		ct, root string
		xop      bool
	}{
		"ok/mtom": {`multipart/related; boundary=B; type="application/xop+xml"; start-info="text/xml"`, "Content-Type: application/xop+xml; type=\"text/xml\"", true},
		"ok/swa":  {`multipart/related; boundary=B; type="text/xml"`, "Content-Type: text/xml", false},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			body := "--B\r\n" + tt.root + "\r\n\r\n<e/>" + part
			pkg, err := mime.Read(context.Background(), strings.NewReader(body), tt.ct, mime.DefaultLimits())
			require.NoError(t, err)
			t.Cleanup(func() { _ = pkg.Close() })
			var o Options
			o.SetPackage(pkg, 1234)
			if !tt.xop {
				assert.Nil(t, o.XOP)
				require.Len(t, o.SwA, 1)
				assert.Equal(t, "a@x", o.SwA[0].ContentID)
				assert.Equal(t, int64(1234), o.SwAMaxXML)
				return
			}
			assert.Empty(t, o.SwA)
			require.NotNil(t, o.XOP)
			r, ok, err := o.XOP("a@x")
			require.NoError(t, err)
			require.True(t, ok)
			got, err := io.ReadAll(r)
			require.NoError(t, err)
			require.NoError(t, r.Close())
			assert.Equal(t, "PNG", string(got))
			_, ok, err = o.XOP("none@x")
			assert.False(t, ok)
			assert.NoError(t, err)
		})
	}
}
