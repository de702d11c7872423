package gateway

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/dom"
	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/xmlscan"
)

// bodyRecorder is a backend that keeps every request body it gets,
// by the request's X-Msg header, and answers okResponse.
type bodyRecorder struct {
	mu  sync.Mutex
	got map[string][][]byte
}

func (rt *bodyRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	rt.mu.Lock()
	rt.got[r.Header.Get("X-Msg")] = append(rt.got[r.Header.Get("X-Msg")], b)
	rt.mu.Unlock()
	return cannedTransport{body: []byte(okResponse)}.RoundTrip(r)
}

// TestForwardedBytesConcurrent: the gateway forwards the request buffer
// itself, the Security header cut out in place (wss.Policy.VerifyOwned),
// and the engines recycle their scratch through pools. Under concurrent
// requests of many shapes, on the template path (misses that learn, then
// hits) and on the DOM engine alone, every body the backend gets is the
// one the copying path (wss.Policy.Verify on the DOM engine) makes of that
// request: no request's forwarded bytes point into memory another request
// reuses. Run it with -race too.
func TestForwardedBytesConcurrent(t *testing.T) {
	for _, c := range []struct {
		name      string
		templates bool
	}{{"ok/templates", true}, {"ok/dom", false}} {
		t.Run(c.name, func(t *testing.T) {
			f := newFreshBench(t, func(cfg *config.Config) { cfg.Templates.Enabled = c.templates })
			rec := &bodyRecorder{got: map[string][][]byte{}}
			f.gw.routes[0].proxy.Transport = rec
			msgs := f.messages(t, 40, f.g.Next)

			d, err := dom.New(xmlscan.DefaultConfig())
			require.NoError(t, err)
			pol := f.gw.routes[0].security.policy
			want := make([][]byte, len(msgs))
			for i, m := range msgs {
				_, out, err := pol.Verify(context.Background(), d, bytes.Clone(m), time.Now())
				require.NoError(t, err)
				want[i] = bytes.Clone(out)
			}
			serve := func(i int) int {
				req := httptest.NewRequest(http.MethodPost, "/mix", bytes.NewReader(msgs[i]))
				req.Header.Set("Content-Type", "text/xml; charset=utf-8")
				if bytes.Contains(msgs[i][:min(len(msgs[i]), 300)], []byte("http://www.w3.org/2003/05/soap-envelope")) {
					req.Header.Set("Content-Type", "application/soap+xml; charset=utf-8")
				}
				req.Header.Set("X-Msg", strconv.Itoa(i))
				w := httptest.NewRecorder()
				f.gw.ServeHTTP(w, req)
				return w.Code
			}
			for i := range msgs { // seen twice: learned (templates.learnAfter)
				require.Equal(t, http.StatusOK, serve(i))
				require.Equal(t, http.StatusOK, serve(i))
			}
			var wg sync.WaitGroup
			for g := range 4 {
				wg.Go(func() {
					for k := range 3 * len(msgs) {
						i := (k*7 + g*11) % len(msgs)
						assert.Equal(t, http.StatusOK, serve(i))
					}
				})
			}
			wg.Wait()
			for i := range msgs {
				got := rec.got[strconv.Itoa(i)]
				require.NotEmpty(t, got, "message %d never reached the backend", i)
				for n, b := range got {
					require.Equal(t, string(want[i]), string(b), "message %d, request %d: the backend got other bytes", i, n)
				}
			}
			hits := gathered(t, f.m, metrics.NameTemplateLookups, map[string]string{"route": "mix", "result": metrics.LookupHit})
			if c.templates {
				assert.Positive(t, hits, "the template path forwarded requests")
			} else {
				assert.Zero(t, hits)
			}
		})
	}
}
