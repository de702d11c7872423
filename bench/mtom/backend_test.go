package main

import (
	"bytes"
	"encoding/base64"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// wantAttachment is the attachment built independently of writeRaw: the
// block repeated and cut.
func wantAttachment(src *source, size int64) []byte {
	return bytes.Repeat(src.raw, int(size/blockSize)+1)[:size]
}

func post(t *testing.T, url string) *http.Response {
	t.Helper()
	resp, err := http.Post(url, "text/xml", strings.NewReader(downloadRequest))
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// TestResponder: both kinds carry exactly the attachment, whatever its
// size relative to the generated block, with a Content-Length that
// matches; the inline base64 is the standard encoding of the whole.
func TestResponder(t *testing.T) {
	src := newSource(7)
	be, err := startResponder(src)
	require.NoError(t, err)
	t.Cleanup(func() { be.Close() })
	for _, size := range []int64{0, 1, 2, blockSize - 1, blockSize, blockSize + 1, 2*blockSize + 5} {
		want := wantAttachment(src, size)
		for kind, ref := range map[string]string{kindMTOM: `href="cid:` + dataCID + `"`, kindSwA: `<f:data>cid:` + dataCID + `</f:data>`} {
			t.Run("ok/"+kind+"/"+strconv.FormatInt(size, 10), func(t *testing.T) {
				resp := post(t, be.url+filesPath+kind+"/"+strconv.FormatInt(size, 10))
				require.Equal(t, http.StatusOK, resp.StatusCode)
				body, err := io.ReadAll(resp.Body)
				require.NoError(t, err)
				assert.Equal(t, int64(len(body)), resp.ContentLength)
				assert.Equal(t, packageLen(kind, size), resp.ContentLength)
				parts := readParts(t, resp.Header.Get("Content-Type"), body)
				require.Len(t, parts, 2)
				assert.Contains(t, string(parts[0]), ref)
				assert.True(t, bytes.Equal(want, parts[1]), "attachment bytes")
			})
		}
		t.Run("ok/inline/"+strconv.FormatInt(size, 10), func(t *testing.T) {
			resp := post(t, be.url+filesPath+kindInline+"/"+strconv.FormatInt(size, 10))
			require.Equal(t, http.StatusOK, resp.StatusCode)
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Equal(t, inlineLen(size), int64(len(body)))
			assert.Equal(t, int64(len(body)), resp.ContentLength)
			text, ok := strings.CutPrefix(string(body), responseHead)
			require.True(t, ok)
			text, ok = strings.CutSuffix(text, responseTail)
			require.True(t, ok)
			assert.Equal(t, base64.StdEncoding.EncodeToString(want), text)
		})
	}
	for _, tc := range []struct{ name, method, path string }{
		{"fail/get", http.MethodGet, filesPath + kindMTOM + "/1"},
		{"fail/kind", http.MethodPost, filesPath + "zip/1"},
		{"fail/no-size", http.MethodPost, filesPath + kindMTOM},
		{"fail/too-large", http.MethodPost, filesPath + kindMTOM + "/" + strconv.Itoa(maxResponseSize+1)},
		{"fail/negative", http.MethodPost, filesPath + kindInline + "/-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, be.url+tc.path, strings.NewReader(downloadRequest))
			require.NoError(t, err)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, http.StatusNotFound, resp.StatusCode)
		})
	}
}

func readParts(t *testing.T, ctype string, body []byte) [][]byte {
	t.Helper()
	_, params, err := mime.ParseMediaType(ctype)
	require.NoError(t, err)
	r := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	var parts [][]byte
	for {
		p, err := r.NextRawPart()
		if err == io.EOF {
			return parts
		}
		require.NoError(t, err)
		b, err := io.ReadAll(p)
		require.NoError(t, err)
		parts = append(parts, b)
	}
}

// BenchmarkResponder: the backend straight over loopback HTTP, without a
// gateway, is the ceiling of the setup; it must outrun the gateway by
// far, or the gateway's throughput would be the backend's.
//
//	go test -run '^$' -bench BenchmarkResponder ./bench/mtom
func BenchmarkResponder(b *testing.B) {
	be, err := startResponder(newSource(1))
	require.NoError(b, err)
	b.Cleanup(func() { be.Close() })
	const size = 64 << 20
	buf := make([]byte, 256<<10)
	for _, kind := range []string{kindMTOM, kindInline} {
		b.Run(kind, func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				resp, err := http.Post(be.url+filesPath+kind+"/"+strconv.Itoa(size), "text/xml", strings.NewReader(downloadRequest))
				require.NoError(b, err)
				_, err = io.CopyBuffer(io.Discard, onlyReader{resp.Body}, buf)
				resp.Body.Close()
				require.NoError(b, err)
			}
		})
	}
}
