package gateway

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/metrics"
)

// TestReadAhead: a response of unknown length that fits one copy buffer
// reaches the client with a Content-Length and the backend's exact bytes;
// one that does not, or announces trailers, or is an event stream, or
// answers HEAD, is relayed as before (chunked, byte-exact, trailers
// kept).
func TestReadAhead(t *testing.T) {
	small := strings.Repeat("s", 4096)
	large := strings.Repeat("L", 3*copyBufferSize+17)
	tests := map[string]struct {
		method     string
		ctype      string
		body       string
		trailer    bool
		wantLength bool // the client sees a Content-Length
	}{
		"ok/small-chunked-gets-length": {body: small, wantLength: true},
		"ok/empty-chunked-gets-length": {body: "", wantLength: true},
		"ok/one-over-buffer-streams":   {body: strings.Repeat("x", copyBufferSize+1)},
		"ok/large-streams":             {body: large},
		"ok/trailer-kept":              {body: small, trailer: true},
		"ok/event-stream":              {body: small, ctype: "text/event-stream; charset=utf-8"},
		"ok/head":                      {method: http.MethodHead, body: small},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				ct := tc.ctype
				if ct == "" {
					ct = "text/xml; charset=utf-8"
				}
				w.Header().Set("Content-Type", ct)
				if tc.trailer {
					w.Header().Set("Trailer", "X-Checksum")
				}
				// Flushed first: the response is chunked, whatever its size.
				w.WriteHeader(http.StatusOK)
				w.(http.Flusher).Flush()
				if r.Method != http.MethodHead {
					_, _ = io.WriteString(w, tc.body)
				}
				if tc.trailer {
					w.Header().Set("X-Checksum", "abc")
				}
			}))
			t.Cleanup(backend.Close)
			f := newFront(t, backend.URL, nil)
			method := tc.method
			if method == "" {
				method = http.MethodPost
			}
			req, err := http.NewRequest(method, f.URL+"/orders", strings.NewReader(testEnvelope))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "text/xml; charset=utf-8")
			resp, err := http.DefaultClient.Do(req)
			if method == http.MethodHead {
				// wssgw takes POST only: HEAD never reaches the backend.
				require.NoError(t, err)
				resp.Body.Close()
				assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
				return
			}
			require.NoError(t, err)
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			assert.Equal(t, tc.body, string(got), "the backend's bytes")
			if tc.wantLength {
				assert.Equal(t, int64(len(tc.body)), resp.ContentLength)
				assert.Empty(t, resp.TransferEncoding)
			} else {
				assert.Equal(t, int64(-1), resp.ContentLength)
				assert.Equal(t, []string{"chunked"}, resp.TransferEncoding)
			}
			if tc.trailer {
				assert.Equal(t, "abc", resp.Trailer.Get("X-Checksum"))
			}
			assert.Equal(t, 1.0, f.outcome(t, metrics.Ok))
		})
	}
}

// TestReadAheadStall: a chunked response that stalls within the read-ahead
// is cut as before (backend_stalled, never a clean end), after the bytes
// that came.
func TestReadAheadStall(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/xml; charset=utf-8")
		_, _ = io.WriteString(w, `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/">`)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(backend.Close)
	f := newFront(t, backend.URL, func(r *config.Route) { r.Timeouts.BackendBodyIdle = 200 * time.Millisecond })
	resp, err := http.Post(f.URL+"/orders", "text/xml; charset=utf-8", strings.NewReader(testEnvelope))
	var got []byte
	if err == nil {
		got, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	require.Error(t, err, "a stalled response must end in an error, never a clean end")
	assert.True(t, strings.HasPrefix(`<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/">`, string(got)))
	require.Eventually(t, func() bool { return f.outcome(t, metrics.BackendStalled) == 1 }, 2*time.Second, 10*time.Millisecond)
	assert.Zero(t, f.outcome(t, metrics.BackendAborted))
}

// TestBufferPoolNoAllocs: taking a copy buffer and giving it back
// allocates nothing once the pool is warm (ReverseProxy and readAhead do
// it for every response).
func TestBufferPoolNoAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	p := newBufferPool()
	p.Put(p.Get())
	assert.Zero(t, testing.AllocsPerRun(100, func() { p.Put(p.Get()) }))
	p.Put(make([]byte, 10)) // another size is dropped
	assert.Len(t, p.Get(), copyBufferSize)
}

// TestReadAheadBackendDuration: wssgw_backend_duration_seconds is the time
// to the backend's response headers, also when the body they announce is
// read ahead before the client gets the headers.
func TestReadAheadBackendDuration(t *testing.T) {
	const bodyDelay = time.Second
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/xml; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		time.Sleep(bodyDelay)
		_, _ = io.WriteString(w, testEnvelope)
	}))
	t.Cleanup(backend.Close)
	f := newFront(t, backend.URL, nil)
	resp, err := http.Post(f.URL+"/orders", "text/xml; charset=utf-8", strings.NewReader(testEnvelope))
	require.NoError(t, err)
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, testEnvelope, string(got))
	assert.Equal(t, int64(len(testEnvelope)), resp.ContentLength, "read ahead")
	fams, err := f.metrics.Registry().Gather()
	require.NoError(t, err)
	var sum float64
	var count uint64
	for _, fam := range fams {
		if fam.GetName() == metrics.NameBackendDuration {
			for _, m := range fam.Metric {
				sum += m.GetHistogram().GetSampleSum()
				count += m.GetHistogram().GetSampleCount()
			}
		}
	}
	require.Equal(t, uint64(1), count)
	assert.Less(t, sum, 0.8*bodyDelay.Seconds(), "the headers came before the body's delay")
}
