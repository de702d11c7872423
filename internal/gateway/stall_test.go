package gateway

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/metrics"
)

// pacedReader returns one chunk per Read after waiting its delay, then EOF;
// a negative delay blocks until ctx ends.
type pacedReader struct {
	ctx    context.Context
	chunks []string
	delays []time.Duration
	closed atomic.Bool
}

func (r *pacedReader) Read(p []byte) (int, error) {
	if len(r.chunks) == 0 {
		return 0, io.EOF
	}
	d := r.delays[0]
	if d < 0 {
		<-r.ctx.Done()
		return 0, errors.New("net/http: request canceled")
	}
	time.Sleep(d)
	n := copy(p, r.chunks[0])
	r.chunks, r.delays = r.chunks[1:], r.delays[1:]
	return n, nil
}

func (r *pacedReader) Close() error { r.closed.Store(true); return nil }

// TestIdleBody: only a Read that waits longer than the idle timeout cuts the
// body; slow progress and a slow consumer do not.
func TestIdleBody(t *testing.T) {
	const idle = 100 * time.Millisecond
	tests := map[string]struct {
		delays      []time.Duration
		pauseReader time.Duration // the consumer's pause between Reads
		want        string
		stalled     bool
	}{
		"ok/fast":           {delays: []time.Duration{0, 0, 0}, want: "abc"},
		"ok/slow-progress":  {delays: []time.Duration{60 * time.Millisecond, 60 * time.Millisecond, 60 * time.Millisecond}, want: "abc"},
		"ok/slow-consumer":  {delays: []time.Duration{0, 0, 0}, pauseReader: 3 * idle, want: "abc"},
		"fail/stall-first":  {delays: []time.Duration{-1}, stalled: true},
		"fail/stall-midway": {delays: []time.Duration{0, -1}, want: "a", stalled: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancelCause(context.Background())
			src := &pacedReader{ctx: ctx, chunks: []string{"a", "b", "c"}[:len(tc.delays)], delays: tc.delays}
			var mark backendMark
			b := &idleBody{rc: src, idle: idle, cancel: cancel, mark: &mark}
			var got strings.Builder
			buf := make([]byte, 8)
			var err error
			start := time.Now()
			for {
				var n int
				n, err = b.Read(buf)
				got.Write(buf[:n])
				if err != nil {
					break
				}
				time.Sleep(tc.pauseReader)
			}
			assert.Equal(t, tc.want, got.String())
			require.NoError(t, b.Close())
			assert.True(t, src.closed.Load())
			if !tc.stalled {
				assert.Equal(t, io.EOF, err)
				assert.False(t, mark.stalled.Load())
				return
			}
			assert.ErrorIs(t, err, errBackendStalled)
			assert.Contains(t, err.Error(), "100ms")
			assert.True(t, mark.stalled.Load(), "the exchange is told")
			assert.ErrorIs(t, context.Cause(ctx), errBackendStalled, "the round trip is cancelled with the cause")
			assert.Less(t, time.Since(start), 2*time.Second)
			_, err = b.Read(buf)
			assert.ErrorIs(t, err, errBackendStalled, "a stalled body stays failed")
		})
	}
}

// TestStallTransport: through a real transport and backend, a body that
// stops after the headers fails with errBackendStalled and the backend
// connection is closed; a complete body reuses the connection.
func TestStallTransport(t *testing.T) {
	release := make(chan struct{})
	backendDone := make(chan struct{}, 1)
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100")
		_, _ = io.WriteString(w, "<partial>")
		w.(http.Flusher).Flush()
		if r.URL.Path == "/stall" {
			select {
			case <-r.Context().Done(): // the gateway closed the connection
				backendDone <- struct{}{}
			case <-release:
			}
			return
		}
		_, _ = io.WriteString(w, strings.Repeat("x", 91))
	}))
	t.Cleanup(backend.Close)
	t.Cleanup(func() { close(release) })
	tr := stallTransport{next: &http.Transport{}, idle: 150 * time.Millisecond}
	client := &http.Client{Transport: tr}

	resp, err := client.Get(backend.URL + "/ok")
	require.NoError(t, err)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.Len(t, b, 100)

	var mark backendMark
	req, _ := http.NewRequest(http.MethodGet, backend.URL+"/stall", nil)
	req = withStallMark(req, &mark)
	resp, err = client.Do(req)
	require.NoError(t, err, "the headers came in time")
	start := time.Now()
	b, err = io.ReadAll(resp.Body)
	assert.ErrorIs(t, err, errBackendStalled)
	assert.Equal(t, "<partial>", string(b))
	assert.InDelta(t, 150, time.Since(start).Milliseconds(), 1500)
	assert.True(t, mark.stalled.Load())
	assert.NotZero(t, mark.headers.Load(), "the headers came")
	_ = resp.Body.Close()
	select {
	case <-backendDone:
	case <-time.After(5 * time.Second):
		t.Fatal("the stalled backend's connection was not closed")
	}
}

// TestBackendStalled: a backend whose body stalls after the headers within
// timeouts.backendBodyIdle: a streamed (unsigned) response is cut, a
// buffered (signed) one answered 504; both counted backend_stalled.
func TestBackendStalled(t *testing.T) {
	stalling := func(ctype string) *httptest.Server {
		b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", ctype)
			w.Header().Set("Content-Length", "10000")
			_, _ = io.WriteString(w, `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/">`)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}))
		t.Cleanup(b.Close)
		return b
	}
	idle := func(r *config.Route) { r.Timeouts.BackendBodyIdle = 200 * time.Millisecond }

	t.Run("fail/streamed-cut", func(t *testing.T) {
		f := newFront(t, stalling("text/xml").URL, idle)
		// The client sees a cut connection: before the headers (still
		// buffered) or while reading the body, never a clean end.
		resp, err := http.Post(f.URL+"/orders", "text/xml", strings.NewReader(testEnvelope))
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		assert.Error(t, err, "a stalled response must end in an error, never a clean end")
		require.Eventually(t, func() bool { return f.outcome(t, metrics.BackendStalled) == 1 }, 2*time.Second, 10*time.Millisecond)
		assert.Zero(t, f.outcome(t, metrics.BackendAborted))
	})

	t.Run("fail/buffered-504", func(t *testing.T) {
		k := newSigningPKI(t)
		f := newSigningFrontConfig(t, stalling("text/xml; charset=utf-8").URL, k, nil, func(c *config.Config) { idle(&c.Routes[0]) })
		resp := post(t, f.URL, signedRequest(t, k))
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		assert.Equal(t, http.StatusGatewayTimeout, resp.StatusCode, string(body))
		assert.Contains(t, string(body), "Backend service timed out")
		assert.Equal(t, 1.0, f.outcome(t, metrics.BackendStalled))
		assert.Equal(t, 1.0, f.signingResult(t, metrics.ResponseBackendError))
	})
}

// TestBackendStalledStreamingSigned: an MTOM response signed while it
// streams, from a backend that stalls: in the root part (read before the
// headers go out) it is a 504, not a response that cannot be signed; in an
// attachment the response is cut without a signature part. Both are
// backend_stalled.
func TestBackendStalledStreamingSigned(t *testing.T) {
	k := newSigningPKI(t)
	const boundary = "stall-boundary"
	stalling := func(prefix string) *httptest.Server {
		b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", `multipart/related; type="application/xop+xml"; start="<root@backend>"; start-info="text/xml"; boundary=`+boundary)
			_, _ = io.WriteString(w, prefix)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}))
		t.Cleanup(b.Close)
		return b
	}
	root := "--" + boundary + "\r\nContent-Type: application/xop+xml; charset=UTF-8; type=\"text/xml\"\r\nContent-ID: <root@backend>\r\n\r\n" +
		`<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><m:Files xmlns:m="urn:example:files">`
	whole := root + `<m:File><xop:Include xmlns:xop="http://www.w3.org/2004/08/xop/include" href="cid:f0@backend"/></m:File></m:Files></soapenv:Body></soapenv:Envelope>` +
		"\r\n--" + boundary + "\r\nContent-Type: application/octet-stream\r\nContent-ID: <f0@backend>\r\n\r\n" + strings.Repeat("x", 1000)
	more := func(c *config.Config) { c.Routes[0].Timeouts.BackendBodyIdle = 200 * time.Millisecond }
	streaming := func(r *config.Responses) { r.Mode = config.ResponseStreaming }

	t.Run("fail/stall-in-root", func(t *testing.T) {
		f := newSigningFrontConfig(t, stalling(root).URL, k, streaming, more)
		resp := post(t, f.URL, signedRequest(t, k))
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		assert.Equal(t, http.StatusGatewayTimeout, resp.StatusCode, string(body))
		assert.Equal(t, 1.0, f.outcome(t, metrics.BackendStalled))
		assert.Zero(t, f.outcome(t, metrics.ResponseSigningFailed))
		assert.Zero(t, f.signingResult(t, metrics.ResponseFailed))
	})
	t.Run("fail/stall-in-attachment", func(t *testing.T) {
		f := newSigningFrontConfig(t, stalling(whole).URL, k, streaming, more)
		resp := post(t, f.URL, signedRequest(t, k))
		require.Equal(t, http.StatusOK, resp.StatusCode, "the headers went out before the stall")
		out, err := io.ReadAll(resp.Body)
		require.Error(t, err, "the partner sees a cut response")
		assert.NotContains(t, string(out), "SignedInfo", "no signature over partial data")
		assert.Eventually(t, func() bool { return f.outcome(t, metrics.BackendStalled) == 1 }, timeout, tick)
		assert.Eventually(t, func() bool { return f.signingResult(t, metrics.ResponseAborted) == 1 }, timeout, tick)
	})
}
