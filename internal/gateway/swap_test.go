package gateway

import (
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/testpki"
)

// named answers every request with its name.
func named(t *testing.T, name string) *httptest.Server {
	t.Helper()
	b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/xml")
		_, _ = io.WriteString(w, "<"+name+"/>")
	}))
	t.Cleanup(b.Close)
	return b
}

// routes is a validated configuration of path → backend routes without
// security.
func routes(t *testing.T, pairs ...string) *config.Config {
	t.Helper()
	cfg := config.Default()
	for i := 0; i < len(pairs); i += 2 {
		name := strings.Trim(pairs[i], "/")
		cfg.Routes = append(cfg.Routes, config.Route{Name: name, Path: pairs[i], Backend: pairs[i+1]})
	}
	cfg.ApplyDefaults()
	require.NoError(t, cfg.Validate())
	return &cfg
}

// reloadable is a Server serving its data handler through httptest.
type reloadable struct {
	*Server
	url string
}

func newReloadable(t *testing.T, cfg *config.Config) *reloadable {
	t.Helper()
	s, err := NewServer(cfg, metrics.New(metrics.BuildInfo{Version: "test"}), slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	ts := httptest.NewServer(s)
	t.Cleanup(func() { ts.Close(); s.stop() })
	return &reloadable{Server: s, url: ts.URL}
}

func (r *reloadable) reload(cfg *config.Config, err error) error {
	_, e := r.Reload(func() (*config.Config, error) { return cfg, err })
	return e
}

func (r *reloadable) call(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := http.Post(r.url+path, "text/xml; charset=utf-8", strings.NewReader(plainEnvelope))
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func (r *reloadable) reloads(t *testing.T, result string) float64 {
	return gathered(t, r.metrics, metrics.NameConfigReloads, map[string]string{metrics.LabelResult: result})
}

func (r *reloadable) lastReloadOK(t *testing.T) float64 {
	t.Helper()
	fams, err := r.metrics.Registry().Gather()
	require.NoError(t, err)
	for _, fam := range fams {
		if fam.GetName() == metrics.NameConfigLastReloadSuccessful {
			return fam.Metric[0].Gauge.GetValue()
		}
	}
	t.Fatalf("no %s", metrics.NameConfigLastReloadSuccessful)
	return 0
}

const plainEnvelope = `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><m:Get xmlns:m="urn:x"/></soapenv:Body></soapenv:Envelope>`

func TestReloadSwapsRoutes(t *testing.T) {
	a, b := named(t, "a"), named(t, "b")
	s := newReloadable(t, routes(t, "/orders", a.URL))
	_, body := s.call(t, "/orders")
	assert.Equal(t, "<a/>", body)
	status, _ := s.call(t, "/new")
	assert.Equal(t, http.StatusNotFound, status)

	require.NoError(t, s.reload(routes(t, "/orders", b.URL, "/new", a.URL), nil))
	_, body = s.call(t, "/orders")
	assert.Equal(t, "<b/>", body, "the changed route")
	_, body = s.call(t, "/new")
	assert.Equal(t, "<a/>", body, "the added route")
	assert.Equal(t, 1.0, s.reloads(t, metrics.ReloadSuccess))
}

// TestReloadFailureKeepsRunningConfig: a configuration that does not load
// or does not build leaves the running one serving, and is counted.
func TestReloadFailureKeepsRunningConfig(t *testing.T) {
	a, b := named(t, "a"), named(t, "b")
	tests := map[string]func() (*config.Config, error){
		"fail/load": func() (*config.Config, error) { return nil, errors.New("routes[0].backend: bad") },
		"fail/build": func() (*config.Config, error) {
			cfg := routes(t, "/orders", strings.Replace(b.URL, "http:", "https:", 1))
			cfg.Routes[0].BackendTLS.CAFile = "/nonexistent/ca.pem"
			return cfg, nil
		},
		"fail/listener-tls": func() (*config.Config, error) {
			cfg := routes(t, "/orders", b.URL)
			cfg.TLS.CertFile, cfg.TLS.KeyFile = "/nonexistent/tls.crt", "/nonexistent/tls.key"
			return cfg, nil
		},
	}
	leaf := testpki.NewCA(t, "reload CA").Issue(t, t.TempDir(), "gateway")
	for name, load := range tests {
		t.Run(name, func(t *testing.T) {
			running := routes(t, "/orders", a.URL)
			running.TLS.CertFile, running.TLS.KeyFile = leaf.CertFile, leaf.KeyFile
			s := newReloadable(t, running)
			gw := s.current()
			_, err := s.Reload(load)
			require.Error(t, err)
			assert.Same(t, gw, s.current())
			_, body := s.call(t, "/orders")
			assert.Equal(t, "<a/>", body)
			assert.Equal(t, 1.0, s.reloads(t, metrics.ReloadFailure))
			assert.Equal(t, 0.0, s.lastReloadOK(t))
			fixed := routes(t, "/orders", b.URL)
			fixed.TLS = running.TLS
			require.NoError(t, s.reload(fixed, nil))
			assert.Equal(t, 1.0, s.lastReloadOK(t), "a later success clears it")
		})
	}
}

// TestReloadInFlightFinishesOnOld: a request that started before a reload
// ends on the gateway it started on, which is closed only after it.
func TestReloadInFlightFinishesOnOld(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
		_, _ = io.WriteString(w, "<old/>")
	}))
	defer slow.Close()
	b := named(t, "b")
	s := newReloadable(t, routes(t, "/orders", slow.URL))
	old := s.live.Load()

	done := make(chan string)
	go func() {
		resp, err := http.Post(s.url+"/orders", "text/xml", strings.NewReader(plainEnvelope))
		if err != nil {
			done <- err.Error()
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		done <- string(body)
	}()
	<-entered
	require.NoError(t, s.reload(routes(t, "/orders", b.URL), nil))
	_, body := s.call(t, "/orders")
	assert.Equal(t, "<b/>", body, "new requests go to the new configuration")
	select {
	case <-old.drained:
		t.Fatal("the old gateway was released with a request in flight")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	assert.Equal(t, "<old/>", <-done)
	select {
	case <-old.drained:
	case <-time.After(5 * time.Second):
		t.Fatal("the old gateway was not released after its last request")
	}
}

// TestLiveRetireRace: requests counting themselves on a gateway while it
// is retired either run on it before it is released or move to the
// current one; none runs on a released gateway. Run with -race.
func TestLiveRetireRace(t *testing.T) {
	for range 200 {
		s := &Server{}
		first := newLive(&Gateway{})
		s.live.Store(first)
		var onReleased atomic.Int64
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 20 {
					l := s.acquire()
					select {
					case <-l.drained:
						onReleased.Add(1)
					default:
					}
					l.release()
				}
			}()
		}
		s.live.Store(newLive(&Gateway{}))
		<-first.retire()
		wg.Wait()
		require.Zero(t, onReleased.Load())
	}
}

// TestReloadUnderLoad: continuous requests while the configuration is
// reloaded over and over: none fails, and every replaced gateway is
// released. Run with -race.
func TestReloadUnderLoad(t *testing.T) {
	a, b := named(t, "a"), named(t, "b")
	s := newReloadable(t, routes(t, "/orders", a.URL))
	stop := make(chan struct{})
	var failed, ok atomic.Int64
	var wg sync.WaitGroup
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				resp, err := client.Post(s.url+"/orders", "text/xml", strings.NewReader(plainEnvelope))
				if err != nil {
					failed.Add(1)
					continue
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || (string(body) != "<a/>" && string(body) != "<b/>") {
					failed.Add(1)
					continue
				}
				ok.Add(1)
			}
		}()
	}
	var replaced []*live
	for i := range 30 {
		backend := a.URL
		if i%2 == 0 {
			backend = b.URL
		}
		replaced = append(replaced, s.live.Load())
		require.NoError(t, s.reload(routes(t, "/orders", backend), nil))
		time.Sleep(5 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	assert.Zero(t, failed.Load())
	assert.Positive(t, ok.Load())
	for i, l := range replaced {
		select {
		case <-l.drained:
		case <-time.After(5 * time.Second):
			t.Fatalf("gateway %d never released", i)
		}
	}
}

// TestReloadCarriesState: the replay store and an unchanged policy (with
// its template store) survive a reload; a changed policy is rebuilt and
// still shares the store. A replayed message stays refused across reloads.
func TestReloadCarriesState(t *testing.T) {
	k := newSigningPKI(t)
	backend := named(t, "ok")
	config1 := func(mutate func(*config.Config)) *config.Config {
		cfg := config.Default()
		p := config.DefaultPolicy()
		p.Trust.CAFiles = []string{k.caFile}
		cfg.Policies = map[string]config.Policy{"partner": p}
		cfg.Routes = []config.Route{{Name: "orders", Path: "/orders", Backend: backend.URL, Policy: "partner"}}
		if mutate != nil {
			mutate(&cfg)
		}
		cfg.ApplyDefaults()
		require.NoError(t, cfg.Validate())
		return &cfg
	}
	s := newReloadable(t, config1(nil))
	msg := signedRequest(t, k)
	require.Equal(t, http.StatusOK, post(t, s.url, msg).StatusCode)
	before := s.current().policies

	// Unchanged policy, a route added: store, policy and templates kept.
	require.NoError(t, s.reload(config1(func(c *config.Config) {
		c.Routes = append(c.Routes, config.Route{Name: "more", Path: "/more", Backend: backend.URL})
	}), nil))
	after := s.current().policies
	assert.Same(t, before.store, after.store)
	assert.Same(t, before.byName["partner"], after.byName["partner"])
	assert.Same(t, before.templates["partner"], after.templates["partner"])
	assert.Equal(t, http.StatusInternalServerError, post(t, s.url, msg).StatusCode, "the replay is still known")

	// Changed policy: recompiled, same store.
	require.NoError(t, s.reload(config1(func(c *config.Config) {
		p := c.Policies["partner"]
		p.Timestamp.FutureSkew = 2 * time.Minute
		c.Policies["partner"] = p
	}), nil))
	changed := s.current().policies
	assert.Same(t, before.store, changed.store)
	assert.NotSame(t, before.byName["partner"], changed.byName["partner"])
	assert.Equal(t, http.StatusInternalServerError, post(t, s.url, msg).StatusCode, "the replay is still known")

	// Ownership moved with the state: the first gateways close nothing of it.
	assert.False(t, before.ownsStore)
	assert.True(t, changed.ownsStore)
	assert.False(t, before.compiled["partner"].owned, "handed on")
	assert.True(t, after.compiled["partner"].owned, "replaced by a changed policy: closed with its last owner")
}

func TestKeepRestartOnly(t *testing.T) {
	base := func() *config.Config { return routes(t, "/orders", "http://127.0.0.1:1") }
	tests := map[string]struct {
		mutate func(*config.Config)
		keys   []string
	}{
		"ok/routes-only":   {mutate: func(c *config.Config) { c.Routes[0].Backend = "http://127.0.0.1:2" }},
		"ok/shutdown":      {mutate: func(c *config.Config) { c.Shutdown.DrainTimeout = time.Minute }},
		"fail/listen":      {mutate: func(c *config.Config) { c.Listen = ":9999" }, keys: []string{"listen"}},
		"fail/admin":       {mutate: func(c *config.Config) { c.Admin.Pprof = true }, keys: []string{"admin"}},
		"fail/log":         {mutate: func(c *config.Config) { c.Log.Level = "debug" }, keys: []string{"log"}},
		"fail/server":      {mutate: func(c *config.Config) { c.Server.IdleTimeout = time.Hour }, keys: []string{"server.idleTimeout"}},
		"fail/tls-on":      {mutate: func(c *config.Config) { c.TLS.CertFile, c.TLS.KeyFile = "a", "b" }, keys: []string{"tls (on or off)"}},
		"fail/two-at-once": {mutate: func(c *config.Config) { c.Listen = ":1"; c.Admin.Listen = ":2" }, keys: []string{"listen", "admin"}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			running, next := base(), base()
			tt.mutate(next)
			var keys []string
			for _, k := range keepRestartOnly(running, next) {
				keys = append(keys, k.key)
			}
			assert.Equal(t, tt.keys, keys)
			assert.Equal(t, running.Listen, next.Listen)
			assert.Equal(t, running.Admin, next.Admin)
			assert.Equal(t, running.Log, next.Log)
			assert.Equal(t, running.Server, next.Server)
			assert.Equal(t, running.TLS, next.TLS)
		})
	}
}

// TestReloadBackendClientCertificate: a backend client certificate renewed
// in place (same files) is presented to the backend after a reload.
func TestReloadBackendClientCertificate(t *testing.T) {
	dir := t.TempDir()
	ca := testpki.NewCA(t, "backend CA")
	serverCert := ca.Issue(t, dir, "backend")
	client := ca.Issue(t, dir, "gateway-client")
	backend := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "<serial>"+r.TLS.PeerCertificates[0].SerialNumber.String()+"</serial>")
	}))
	backend.TLS = &tls.Config{Certificates: []tls.Certificate{serverCert.TLS(t)}, ClientCAs: ca.Pool(), ClientAuth: tls.RequireAndVerifyClientCert}
	backend.StartTLS()
	t.Cleanup(backend.Close)
	cfg := func() *config.Config {
		c := routes(t, "/orders", backend.URL)
		c.Routes[0].BackendTLS = config.BackendTLS{CAFile: ca.WriteCert(t, dir), CertFile: client.CertFile, KeyFile: client.KeyFile}
		require.NoError(t, c.Validate())
		return c
	}
	s := newReloadable(t, cfg())
	_, body := s.call(t, "/orders")
	assert.Equal(t, "<serial>"+client.Cert.SerialNumber.String()+"</serial>", body)

	renewed := ca.Renew(t, t.TempDir(), client)
	for src, dst := range map[string]string{renewed.CertFile: client.CertFile, renewed.KeyFile: client.KeyFile} {
		data, err := os.ReadFile(src)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(dst, data, 0o600))
	}
	require.NoError(t, s.reload(cfg(), nil))
	_, body = s.call(t, "/orders")
	assert.Equal(t, "<serial>"+renewed.Cert.SerialNumber.String()+"</serial>", body)
}

// TestReloadKeptPolicyRefreshesFiles: a reload that keeps a policy re-reads
// its files; one that fails to load is counted in
// wssgw_key_reload_failures_total and leaves the reload itself a success
// (the previous material stays, as with a poll).
func TestReloadKeptPolicyRefreshesFiles(t *testing.T) {
	k := newSigningPKI(t)
	backend := named(t, "ok")
	cfg := func() *config.Config {
		c := config.Default()
		p := config.DefaultPolicy()
		p.Trust.CAFiles = []string{k.caFile}
		c.Policies = map[string]config.Policy{"partner": p}
		c.Routes = []config.Route{{Name: "orders", Path: "/orders", Backend: backend.URL, Policy: "partner"}}
		c.ApplyDefaults()
		require.NoError(t, c.Validate())
		return &c
	}
	s := newReloadable(t, cfg())
	kept := s.current().policies.byName["partner"]
	// Validated before the file broke: config validation loads trust files
	// too (a broken one fails the whole reload), so this is the file
	// changing between validation and the policy's refresh.
	next := cfg()
	require.NoError(t, os.WriteFile(k.caFile, []byte("not PEM"), 0o600))
	require.NoError(t, s.reload(next, nil))
	assert.Same(t, kept, s.current().policies.byName["partner"])
	assert.Equal(t, 1.0, gathered(t, s.metrics, metrics.NameKeyReloadFailures, map[string]string{metrics.LabelKind: metrics.KeyKindTrust}))
	assert.Equal(t, 0.0, gathered(t, s.metrics, metrics.NameKeyReloadFailures, map[string]string{metrics.LabelKind: metrics.KeyKindDecryption}))
	assert.Equal(t, http.StatusOK, post(t, s.url, signedRequest(t, k)).StatusCode, "the previous trust store still verifies")
}

// TestReloadLeaksNothing: many reloads, each with traffic, leave no
// goroutine behind (pollers, backend connections of replaced gateways).
func TestReloadLeaksNothing(t *testing.T) {
	k := newSigningPKI(t)
	a, b := named(t, "a"), named(t, "b")
	cfg := func(backend string, skew time.Duration) *config.Config {
		c := config.Default()
		p := config.DefaultPolicy()
		p.Trust.CAFiles = []string{k.caFile}
		p.Timestamp.FutureSkew = skew // a changed policy: compiled anew, the old one stopped
		c.Policies = map[string]config.Policy{"partner": p}
		c.Routes = []config.Route{
			{Name: "orders", Path: "/orders", Backend: backend, Policy: "partner"},
			{Name: "plain", Path: "/plain", Backend: backend},
		}
		c.ApplyDefaults()
		require.NoError(t, c.Validate())
		return &c
	}
	s := newReloadable(t, cfg(a.URL, time.Minute))
	s.call(t, "/plain")
	time.Sleep(100 * time.Millisecond)
	base := runtime.NumGoroutine()
	for i := range 20 {
		backend := a.URL
		if i%2 == 0 {
			backend = b.URL
		}
		prev := s.live.Load()
		require.NoError(t, s.reload(cfg(backend, time.Duration(i+2)*time.Minute), nil))
		status, _ := s.call(t, "/plain")
		require.Equal(t, http.StatusOK, status)
		<-prev.drained
	}
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > base+3 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), base+3, "goroutines: %d before 20 reloads", base)
}

// TestReloadKeepsOCSPCache: a policy changed in anything but trust.ocsp is
// compiled anew with the same OCSP checker (its cache of responses); a
// changed trust.ocsp makes a new one, and the replaced checker stops.
func TestReloadKeepsOCSPCache(t *testing.T) {
	k := newSigningPKI(t)
	backend := named(t, "ok")
	cfg := func(skew, refresh time.Duration) *config.Config {
		c := config.Default()
		p := config.DefaultPolicy()
		p.Trust.CAFiles = []string{k.caFile}
		p.Trust.OCSP = config.OCSP{Enabled: true, ResponderURL: "http://127.0.0.1:1/ocsp", Refresh: refresh}
		p.Timestamp.FutureSkew = skew
		c.Policies = map[string]config.Policy{"partner": p}
		c.Routes = []config.Route{{Name: "orders", Path: "/orders", Backend: backend.URL, Policy: "partner"}}
		c.ApplyDefaults()
		require.NoError(t, c.Validate())
		return &c
	}
	s := newReloadable(t, cfg(time.Minute, time.Minute))
	first := s.current().policies
	require.NotNil(t, first.ocsp["partner"])

	require.NoError(t, s.reload(cfg(2*time.Minute, time.Minute), nil))
	second := s.current().policies
	assert.NotSame(t, first.byName["partner"], second.byName["partner"], "the policy changed")
	assert.Same(t, first.ocsp["partner"].checker, second.ocsp["partner"].checker, "ok/ocsp unchanged: cache kept")
	assert.Same(t, second.ocsp["partner"].checker, second.byName["partner"].OCSP())
	assert.False(t, first.ocsp["partner"].owned)

	require.NoError(t, s.reload(cfg(2*time.Minute, 2*time.Minute), nil))
	third := s.current().policies
	assert.NotSame(t, second.ocsp["partner"].checker, third.ocsp["partner"].checker, "fail/ocsp changed: a new checker")
	assert.True(t, second.ocsp["partner"].owned, "the replaced checker is stopped with its last gateway")
}

// TestReloadFailureHandsNothingOver: a reload that fails after borrowing
// the replay store and a kept policy leaves both owned, and running, by
// the serving gateway.
func TestReloadFailureHandsNothingOver(t *testing.T) {
	k := newSigningPKI(t)
	backend := named(t, "ok")
	cfg := func(broken bool) *config.Config {
		c := config.Default()
		p := config.DefaultPolicy()
		p.Trust.CAFiles = []string{k.caFile}
		c.Policies = map[string]config.Policy{"partner": p}
		c.Routes = []config.Route{{Name: "orders", Path: "/orders", Backend: backend.URL, Policy: "partner"}}
		if broken { // fails in build, after the policies were borrowed
			c.Routes = append(c.Routes, config.Route{Name: "tls", Path: "/tls", Backend: "https://127.0.0.1:1",
				BackendTLS: config.BackendTLS{CAFile: "/nonexistent/ca.pem"}})
		}
		c.ApplyDefaults()
		return &c
	}
	s := newReloadable(t, cfg(false))
	running := s.current().policies
	require.Error(t, s.reload(cfg(true), nil))
	assert.Same(t, running, s.current().policies)
	assert.True(t, running.ownsStore)
	assert.True(t, running.compiled["partner"].owned)
	msg := signedRequest(t, k)
	assert.Equal(t, http.StatusOK, post(t, s.url, msg).StatusCode)
	assert.Equal(t, http.StatusInternalServerError, post(t, s.url, msg).StatusCode, "the store still records")

	// And a later good reload still carries them.
	require.NoError(t, s.reload(cfg(false), nil))
	assert.Same(t, running.store, s.current().policies.store)
	assert.False(t, running.ownsStore)
}

// TestReloadCarriesLimits: a reload through Server.Reload keeps the limits'
// buckets (a client refused before is still refused after) and applies the
// new configuration's limits; a failed reload leaves them as they were.
func TestReloadCarriesLimits(t *testing.T) {
	b := named(t, "a")
	limited := func(rate float64) *config.Config {
		cfg := routes(t, "/a", b.URL)
		cfg.Routes[0].Limits.Total = config.Limit{Rate: rate, Burst: 1}
		require.NoError(t, cfg.Validate())
		return cfg
	}
	r := newReloadable(t, limited(0.001))
	st, _ := r.call(t, "/a")
	require.Equal(t, http.StatusOK, st)
	st, _ = r.call(t, "/a")
	require.Equal(t, http.StatusTooManyRequests, st)

	require.NoError(t, r.reload(limited(0.001), nil))
	st, _ = r.call(t, "/a")
	assert.Equal(t, http.StatusTooManyRequests, st, "the reload refilled the bucket")

	require.Error(t, r.reload(nil, errors.New("broken")))
	st, _ = r.call(t, "/a")
	assert.Equal(t, http.StatusTooManyRequests, st, "a failed reload changed the limits")

	require.NoError(t, r.reload(routes(t, "/a", b.URL), nil))
	st, _ = r.call(t, "/a")
	assert.Equal(t, http.StatusOK, st, "the reload did not lift the limit")
}
