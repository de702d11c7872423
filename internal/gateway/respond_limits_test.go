package gateway

import (
	"bytes"
	"io"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/metrics"
)

// TestRespondStreamingMIMELimits: a streamed response is bounded by the
// configured mime limits, not internal/mime's defaults: an attachment over
// mime.maxPartSize is cut before any signature, one within it is signed.
func TestRespondStreamingMIMELimits(t *testing.T) {
	k := newSigningPKI(t)
	streaming := func(r *config.Responses) { r.Mode = config.ResponseStreaming }
	small := func(c *config.Config) { c.MIME.MaxPartSize = 64 << 10 }
	for _, tc := range []struct {
		name   string
		size   int
		result string
	}{
		{"ok/within-maxPartSize", 60 << 10, metrics.ResponseSigned},
		{"fail/over-maxPartSize", 600 << 10, metrics.ResponseAborted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			atts := [][]byte{bytes.Repeat([]byte("y"), tc.size)}
			f := newSigningFrontConfig(t, mtomBackend(t, atts, 0).URL, k, streaming, small)
			resp := post(t, f.URL, signedRequest(t, k))
			require.Equal(t, 200, resp.StatusCode, "headers go out before the attachment")
			out, err := io.ReadAll(resp.Body)
			if tc.result == metrics.ResponseSigned {
				require.NoError(t, err)
				assert.Contains(t, string(out), "@wssgw>", "the signature part")
			} else {
				require.Error(t, err, "the partner sees a cut response")
				assert.NotContains(t, string(out), "SignedInfo", "no signature over partial data")
			}
			assert.Eventually(t, func() bool { return f.signingResult(t, tc.result) == 1 }, timeout, tick)
		})
	}
}

// TestRespondBufferedDeclaredTooLarge: a Content-Length over
// maxBufferedSize is refused before the body is read.
func TestRespondBufferedDeclaredTooLarge(t *testing.T) {
	k := newSigningPKI(t)
	body := strings.Replace(okResponse, "<m:Count>3</m:Count>", "<m:Count>"+strings.Repeat("3", 2<<10)+"</m:Count>", 1)
	f := newSigningFront(t, soapBackend(t, 200, "text/xml; charset=utf-8", body).URL, k, func(r *config.Responses) { r.MaxBufferedSize = 1 << 10 })
	resp := post(t, f.URL, signedRequest(t, k))
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, 502, resp.StatusCode, "%s", out)
	assert.NotContains(t, string(out), "3333", "nothing of the unsigned answer")
	assert.Equal(t, 1.0, f.signingResult(t, metrics.ResponseFailed))
}

func TestReadBody(t *testing.T) {
	data := bytes.Repeat([]byte("z"), 100<<10)
	for _, tc := range []struct {
		name      string
		r         io.Reader
		cl, limit int64
		want      int
		fail      bool
	}{
		{"ok/known-length", bytes.NewReader(data), int64(len(data)), 1 << 20, len(data), false},
		{"ok/unknown-length", iotest.HalfReader(bytes.NewReader(data)), -1, 1 << 20, len(data), false},
		{"ok/over-limit-reads-limit-plus-one", bytes.NewReader(data), -1, 1000, 1001, false},
		{"ok/empty", bytes.NewReader(nil), 0, 1000, 0, false},
		{"fail/read-error", iotest.TimeoutReader(bytes.NewReader(data)), int64(len(data)), 1 << 20, 0, true},
		{"fail/truncated", io.MultiReader(bytes.NewReader(data[:100]), iotest.ErrReader(io.ErrUnexpectedEOF)), int64(len(data)), 1 << 20, 0, true},
		{"fail/longer-than-declared", bytes.NewReader(data), 1000, 1 << 20, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readBody(tc.r, tc.cl, tc.limit)
			if tc.fail {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Len(t, got, tc.want)
		})
	}
}

// TestReadBodyOneBuffer: a known length is read into one buffer of that
// size, not grown by doubling (io.ReadAll allocates about three times a
// large response on the way and may hold twice it).
func TestReadBodyOneBuffer(t *testing.T) {
	data := bytes.Repeat([]byte("z"), 4<<20)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err := readBody(bytes.NewReader(data), int64(len(data)), 64<<20)
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	require.Len(t, got, len(data))
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(len(data))+64<<10, "one buffer")
	assert.Less(t, cap(got), len(data)+16<<10, "no doubling")
}
