package gateway

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/limit"
	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/testpki"
)

// limitFront is a gateway with limits, its log and metrics.
type limitFront struct {
	gw   *Gateway
	srv  *httptest.Server
	m    *metrics.Metrics
	logs *logBuffer
}

// newLimitFront serves a gateway for cfg (routes and policies set by
// the caller) with its JSON log captured.
func newLimitFront(t *testing.T, cfg config.Config) *limitFront {
	t.Helper()
	cfg.ApplyDefaults()
	require.NoError(t, cfg.Validate())
	f := &limitFront{m: metrics.New(metrics.BuildInfo{Version: "test"}), logs: &logBuffer{}}
	gw, err := New(&cfg, f.m, slog.New(slog.NewJSONHandler(f.logs, nil)))
	require.NoError(t, err)
	t.Cleanup(gw.Close)
	f.gw, f.srv = gw, httptest.NewServer(gw)
	t.Cleanup(f.srv.Close)
	return f
}

// rejections is wssgw_ratelimit_rejections_total of route orders and scope.
func (f *limitFront) rejections(t *testing.T, scope string) float64 {
	t.Helper()
	return gathered(t, f.m, metrics.NameRateLimitRejections, map[string]string{"route": "orders", "scope": scope})
}

// lastRequest is the last request log line.
func (f *limitFront) lastRequest(t *testing.T) map[string]any {
	t.Helper()
	lines := f.logs.requests(t)
	require.NotEmpty(t, lines)
	return lines[len(lines)-1]
}

// clientFrom is an HTTP client whose connections come from the loopback
// address ip, so that the gateway sees it as its own client.
func clientFrom(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
}

// postFrom posts a SOAP 1.1 envelope to /orders; header, when not nil,
// adds request headers. It returns the status, Retry-After and body.
func postFrom(t *testing.T, c *http.Client, url string, body []byte, header http.Header) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/orders", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "text/xml; charset=utf-8")
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header.Get("Retry-After"), string(b)
}

func plainRoute(backend string, l config.RouteLimits) config.Config {
	cfg := config.Default()
	cfg.Routes = []config.Route{{Name: "orders", Path: "/orders", Backend: backend, Limits: l}}
	return cfg
}

// TestClientRateLimit: a client address over its rate gets a 429 SOAP
// fault with Retry-After before its body is read, nothing of it reaches
// the backend, and another address is still served.
func TestClientRateLimit(t *testing.T) {
	rec := newRecorder(t)
	f := newLimitFront(t, plainRoute(rec.URL, config.RouteLimits{PerClient: config.Limit{Rate: 0.2, Burst: 2}}))
	a, b := clientFrom("127.0.0.2"), clientFrom("127.0.0.3")
	body := []byte(testEnvelope)

	for range 2 {
		status, _, _ := postFrom(t, a, f.srv.URL, body, nil)
		require.Equal(t, http.StatusOK, status)
	}
	status, retry, fault := postFrom(t, a, f.srv.URL, body, nil)
	assert.Equal(t, http.StatusTooManyRequests, status)
	secs, err := strconv.Atoi(retry)
	require.NoError(t, err, "Retry-After %q", retry)
	assert.True(t, secs >= 4 && secs <= 5, "Retry-After %d: a token is due in about 5s at 0.2/s", secs)
	assert.Contains(t, fault, "<faultcode>soap:Client</faultcode>")
	assert.Contains(t, fault, "Too many requests")
	assert.Len(t, rec.requests(), 2, "the refused request must not reach the backend")

	line := f.lastRequest(t)
	assert.Equal(t, "rate_limited", line["outcome"])
	assert.Equal(t, "client_rate", line["reason"])
	assert.Equal(t, "127.0.0.2/32", line["client"])
	assert.Equal(t, 429.0, line["status"])
	assert.Equal(t, 0.0, line["bytes_in"], "refused before the body is read")
	assert.Equal(t, 1.0, f.rejections(t, metrics.ScopeClient))
	assert.Equal(t, 0.0, f.rejections(t, metrics.ScopeRoute))
	assert.Equal(t, 1.0, gathered(t, f.m, metrics.NameRequests, map[string]string{"route": "orders", "outcome": "rate_limited"}))

	// Another address keeps its own share.
	status, _, _ = postFrom(t, b, f.srv.URL, body, nil)
	assert.Equal(t, http.StatusOK, status)
	assert.Len(t, rec.requests(), 3)
}

// TestForwardedClient: behind a trusted proxy the client is the
// forwarded address, not the proxy; from an untrusted peer the header is
// ignored, so a client cannot dodge its limit by inventing addresses.
func TestForwardedClient(t *testing.T) {
	rec := newRecorder(t)
	cfg := plainRoute(rec.URL, config.RouteLimits{PerClient: config.Limit{Rate: 0.01, Burst: 1}})
	cfg.Clients.TrustedProxies = []string{"127.0.0.2"}
	f := newLimitFront(t, cfg)
	proxy, direct := clientFrom("127.0.0.2"), clientFrom("127.0.0.3")
	body := []byte(testEnvelope)
	xff := func(a string) http.Header { return http.Header{"X-Forwarded-For": {a}} }

	st, _, _ := postFrom(t, proxy, f.srv.URL, body, xff("203.0.113.1"))
	require.Equal(t, http.StatusOK, st)
	st, _, _ = postFrom(t, proxy, f.srv.URL, body, xff("203.0.113.2"))
	require.Equal(t, http.StatusOK, st, "another client behind the same proxy")
	st, _, _ = postFrom(t, proxy, f.srv.URL, body, xff("198.51.100.9, 203.0.113.1"))
	require.Equal(t, http.StatusTooManyRequests, st, "the right-most untrusted address is the client")
	assert.Equal(t, "203.0.113.1/32", f.lastRequest(t)["client"])

	st, _, _ = postFrom(t, direct, f.srv.URL, body, xff("203.0.113.3"))
	require.Equal(t, http.StatusOK, st)
	st, _, _ = postFrom(t, direct, f.srv.URL, body, xff("203.0.113.4"))
	require.Equal(t, http.StatusTooManyRequests, st, "an untrusted peer's X-Forwarded-For is ignored")
	assert.Equal(t, "127.0.0.3/32", f.lastRequest(t)["client"])
}

// blockingBackend holds every request until release is closed, and
// reports each arrival on arrived.
func blockingBackend(t *testing.T) (srv *httptest.Server, arrived chan struct{}, release func()) {
	t.Helper()
	arrived = make(chan struct{}, 16)
	done := make(chan struct{})
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		arrived <- struct{}{}
		<-done
		w.Header().Set("Content-Type", "text/xml; charset=utf-8")
		_, _ = io.WriteString(w, testEnvelope)
	}))
	var once sync.Once
	release = func() { once.Do(func() { close(done) }) }
	t.Cleanup(srv.Close)
	t.Cleanup(release)
	return srv, arrived, release
}

// TestConcurrencyLimit: with maxConcurrent requests in flight the next one
// gets 429 (Retry-After 1); when one ends, a place is free again.
func TestConcurrencyLimit(t *testing.T) {
	tests := map[string]struct {
		limits config.RouteLimits
		addr   string // the address of the refused request's client
		scope  string
	}{
		"fail/route total": {config.RouteLimits{Total: config.Limit{MaxConcurrent: 1}}, "127.0.0.3", metrics.ScopeRoute},
		"fail/per client":  {config.RouteLimits{PerClient: config.Limit{MaxConcurrent: 1}}, "127.0.0.2", metrics.ScopeClient},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			backend, arrived, release := blockingBackend(t)
			f := newLimitFront(t, plainRoute(backend.URL, tc.limits))
			body := []byte(testEnvelope)
			first := make(chan int, 1)
			go func() {
				st, _, _ := postFrom(t, clientFrom("127.0.0.2"), f.srv.URL, body, nil)
				first <- st
			}()
			select {
			case <-arrived:
			case <-time.After(10 * time.Second):
				t.Fatal("the first request never reached the backend")
			}
			second := clientFrom(tc.addr)
			st, retry, _ := postFrom(t, second, f.srv.URL, body, nil)
			assert.Equal(t, http.StatusTooManyRequests, st)
			assert.Equal(t, "1", retry)
			assert.Equal(t, tc.scope+"_concurrency", f.lastRequest(t)["reason"])
			assert.Equal(t, tc.addr+"/32", f.lastRequest(t)["client"], "the refused client is named")
			assert.Equal(t, 1.0, f.rejections(t, tc.scope))
			release()
			require.Equal(t, http.StatusOK, <-first)
			st, _, _ = postFrom(t, second, f.srv.URL, body, nil)
			assert.Equal(t, http.StatusOK, st, "the place is free once the first request ended")
			assert.Len(t, arrived, 1, "the refused request never reached the backend")
		})
	}
}

// TestSignerRateLimit: a partner over its per-signer rate gets 429 after
// verification, before forwarding, and the log names it; another
// partner's certificate is still served. Both send from one address.
func TestSignerRateLimit(t *testing.T) {
	dir := t.TempDir()
	ca := testpki.NewCA(t, "wssgw limits CA")
	caFile := ca.WriteCert(t, dir)
	pa, pb := ca.IssueRSA(t, dir, "partner-a"), ca.IssueRSA(t, dir, "partner-b")
	rec := newRecorder(t)
	cfg := config.Default()
	p := config.DefaultPolicy()
	p.Trust.CAFiles = []string{caFile}
	cfg.Policies = map[string]config.Policy{"partner": p}
	cfg.Routes = []config.Route{{Name: "orders", Path: "/orders", Backend: rec.URL, Policy: "partner",
		Limits: config.RouteLimits{PerSigner: config.Limit{Rate: 0.01, Burst: 1}}}}
	f := newLimitFront(t, cfg)
	c := clientFrom("127.0.0.2")
	signed := func(l *testpki.Leaf) []byte { return signedRequest(t, &signingPKI{caFile: caFile, partner: l}) }

	st, _, _ := postFrom(t, c, f.srv.URL, signed(pa), nil)
	require.Equal(t, http.StatusOK, st)
	st, retry, _ := postFrom(t, c, f.srv.URL, signed(pa), nil)
	require.Equal(t, http.StatusTooManyRequests, st)
	assert.NotEmpty(t, retry)
	assert.Len(t, rec.requests(), 1, "the refused request must not reach the backend")

	sum := sha256.Sum256(pa.Cert.Raw)
	thumb := hex.EncodeToString(sum[:])
	line := f.lastRequest(t)
	assert.Equal(t, "rate_limited", line["outcome"])
	assert.Equal(t, "signer_rate", line["reason"])
	assert.Equal(t, "sha256:"+thumb, line["client"])
	assert.Equal(t, thumb, line["signer_sha256"])
	assert.Contains(t, line["signer"], "CN=partner-a")
	assert.Equal(t, 1.0, f.rejections(t, metrics.ScopeSigner))

	st, _, _ = postFrom(t, c, f.srv.URL, signed(pb), nil)
	assert.Equal(t, http.StatusOK, st, "another partner keeps its share")
	assert.Len(t, rec.requests(), 2)
}

// TestAddressSprayIsBounded: requests from ever new addresses (forwarded
// by a trusted proxy) keep the limiter's table at clients.maxTracked.
func TestAddressSprayIsBounded(t *testing.T) {
	rec := newRecorder(t)
	cfg := plainRoute(rec.URL, config.RouteLimits{PerClient: config.Limit{Rate: 1}})
	cfg.Clients.TrustedProxies = []string{"127.0.0.0/8"}
	cfg.Clients.MaxTracked = 50
	f := newLimitFront(t, cfg)
	c := f.srv.Client()
	for i := range 500 {
		st, _, _ := postFrom(t, c, f.srv.URL, []byte(testEnvelope), http.Header{"X-Forwarded-For": {fmt.Sprintf("10.%d.%d.1", i/256, i%256)}})
		require.Equal(t, http.StatusOK, st)
	}
	st := f.gw.limits.Route("orders").Stats()
	assert.Equal(t, 50, st.Clients)
	assert.Equal(t, uint64(450), st.ClientsEvicted)
	// The operator sees the table full and what it forgot.
	tracked := map[string]string{"route": "orders", "scope": metrics.ScopeClient}
	assert.Equal(t, 450.0, gathered(t, f.m, metrics.NameRateLimitForgotten, tracked))
	fams, err := f.m.Registry().Gather()
	require.NoError(t, err)
	var gauge float64 = -1
	for _, fam := range fams {
		if fam.GetName() == metrics.NameRateLimitTracked {
			for _, s := range fam.Metric {
				if s.Label[0].GetValue() == "orders" && s.Label[1].GetValue() == metrics.ScopeClient {
					gauge = s.Gauge.GetValue()
				}
			}
		}
	}
	assert.Equal(t, 50.0, gauge)
}

// TestLimitsSurviveRebuild: a gateway that takes the running one's limits
// and applies its configuration to them (what a reload does) keeps the
// buckets: a client refused before is still refused after, and the new
// rules apply to the old gateway's requests too.
func TestLimitsSurviveRebuild(t *testing.T) {
	rec := newRecorder(t)
	cfg := plainRoute(rec.URL, config.RouteLimits{PerClient: config.Limit{Rate: 0.01, Burst: 1}})
	f := newLimitFront(t, cfg)
	c := clientFrom("127.0.0.2")
	st, _, _ := postFrom(t, c, f.srv.URL, []byte(testEnvelope), nil)
	require.Equal(t, http.StatusOK, st)

	next := cfg
	next.Routes = []config.Route{cfg.Routes[0]}
	next.Routes[0].Limits.Total = config.Limit{MaxConcurrent: 100}
	next.ApplyDefaults()
	gw2, err := New(&next, f.m, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	t.Cleanup(gw2.Close)
	gw2.limits = f.gw.limits // the reload recipe: take the Set, then apply
	gw2.applyLimits(&next)
	require.Same(t, f.gw.routes[0].limiter, gw2.routes[0].limiter)
	srv2 := httptest.NewServer(gw2)
	t.Cleanup(srv2.Close)
	st, _, _ = postFrom(t, c, srv2.URL, []byte(testEnvelope), nil)
	assert.Equal(t, http.StatusTooManyRequests, st, "the reload did not refill the bucket")
	st, _, _ = postFrom(t, clientFrom("127.0.0.3"), srv2.URL, []byte(testEnvelope), nil)
	assert.Equal(t, http.StatusOK, st)
}

// TestRefusalIsAFault: classify maps a refusal to 429 and rate_limited, and
// fail sets Retry-After rounded up to whole seconds.
func TestRefusalIsAFault(t *testing.T) {
	f := classify(fmt.Errorf("wrapped: %w", &limit.Refusal{Scope: limit.ScopeClient, Kind: limit.KindRate}))
	assert.Equal(t, http.StatusTooManyRequests, f.status)
	assert.Equal(t, metrics.RateLimited, f.outcome)
	for ra, want := range map[time.Duration]int{0: 1, time.Millisecond: 1, time.Second: 1, 1001 * time.Millisecond: 2, time.Minute: 60} {
		assert.Equal(t, want, retryAfter(&limit.Refusal{RetryAfter: ra}), "%s", ra)
	}
	assert.Equal(t, 0, retryAfter(errMethod))
	// The scope names the metrics label values.
	var scopes []string
	for s := limit.ScopeRoute; s <= limit.ScopeSigner; s++ {
		scopes = append(scopes, s.String())
	}
	assert.Equal(t, metrics.RateLimitScopes(), scopes)
}

// TestSignerLimitMTOM: a verified MTOM package over its signer's limit is
// refused before forwarding and its spooled attachment is removed.
func TestSignerLimitMTOM(t *testing.T) {
	dir, spool := t.TempDir(), t.TempDir()
	ca := testpki.NewCA(t, "limits mtom CA")
	leaf := ca.Issue(t, dir, "partner")
	rec := newRecorder(t)
	cfg := config.Default()
	p := config.DefaultPolicy()
	p.Trust.CAFiles = []string{ca.WriteCert(t, dir)}
	p.Require = []string{config.RequireSignature}
	cfg.Policies = map[string]config.Policy{"partner": p}
	cfg.Routes = []config.Route{{Name: "orders", Path: "/orders", Backend: rec.URL, Policy: "partner",
		Limits: config.RouteLimits{PerSigner: config.Limit{MaxConcurrent: 1, Rate: 0.01}}}}
	cfg.MIME.SpoolDir, cfg.MIME.SpoolThreshold = spool, 16
	f := newLimitFront(t, cfg)
	data := bytes.Repeat([]byte("attachment\x00\xff"), 500)
	for i, want := range []int{http.StatusOK, http.StatusTooManyRequests} {
		resp, err := http.Post(f.srv.URL+"/orders", mtomTestType, bytes.NewReader(signedMTOM(t, leaf, data)))
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		require.Equal(t, want, resp.StatusCode, "request %d", i)
	}
	assert.Len(t, rec.requests(), 1)
	assert.Equal(t, "signer_rate", f.lastRequest(t)["reason"])
	assert.Eventually(t, func() bool { return spoolEmpty(t, spool) }, 2*time.Second, 5*time.Millisecond)
}
