package gateway

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/testnet"
	"github.com/wssgw/wssgw/internal/testpki"
)

// series is the metric of a family whose labels include want; nil when
// there is none.
func series(t *testing.T, m *metrics.Metrics, name string, want map[string]string) *dto.Metric {
	t.Helper()
	fams, err := m.Registry().Gather()
	require.NoError(t, err)
	for _, fam := range fams {
		if fam.GetName() != name {
			continue
		}
	next:
		for _, s := range fam.Metric {
			have := map[string]string{}
			for _, l := range s.Label {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range want {
				if have[k] != v {
					continue next
				}
			}
			return s
		}
	}
	return nil
}

func histogramCount(t *testing.T, m *metrics.Metrics, name string, want map[string]string) uint64 {
	t.Helper()
	s := series(t, m, name, want)
	require.NotNil(t, s, "%s%v does not exist", name, want)
	return s.GetHistogram().GetSampleCount()
}

// TestMTOMLookupHits: an MTOM package is on the template path like a plain
// message (issue 14): the first one of a shape is a miss the DOM engine
// handles and learns from, the next ones are hits; not_applicable is left
// for packages with encrypted headers or attachments (an encrypted Body
// with its CipherValues in parts hits too: TestWSS4JEncryptedMTOMTemplateHits).
func TestMTOMLookupHits(t *testing.T) {
	dir := t.TempDir()
	ca := testpki.NewCA(t, "mtom lookup CA")
	leaf := ca.Issue(t, dir, "partner")
	caFile := ca.WriteCert(t, dir)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = w.Write([]byte("<ok/>"))
	}))
	t.Cleanup(up.Close)
	f := newMTOMFront(t, up.URL, caFile, t.TempDir())
	lookups := func(result string) float64 {
		return gathered(t, f.metrics, metrics.NameTemplateLookups, map[string]string{"route": "orders", "result": result})
	}
	for k := range 3 {
		resp, err := http.Post(f.URL+"/orders", mtomTestType, bytes.NewReader(signedMTOM(t, leaf, fmt.Appendf(nil, "attachment %d", k))))
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	assert.Equal(t, 1.0, lookups(metrics.LookupNoTemplate), "the first package is learned")
	assert.Equal(t, 2.0, lookups(metrics.LookupHit))
	assert.Equal(t, 0.0, lookups(metrics.LookupNotApplicable))
	assert.Equal(t, 0.0, lookups(metrics.LookupRejected))
	assert.Equal(t, uint64(1), histogramCount(t, f.metrics, metrics.NameEngineDuration, map[string]string{"route": "orders", "engine": "dom"}))
	assert.Equal(t, uint64(2), histogramCount(t, f.metrics, metrics.NameEngineDuration, map[string]string{"route": "orders", "engine": "template"}))
}

// TestEngineReplayAndLegacyMetrics drives a partner signing with an
// RSA-1024 key through a policy that allows it (the repo's signer writes
// no SHA-1): the engine time is recorded per engine,
// the replay store counts the first sight and the replay, and the legacy
// use is counted with the signer's subject.
func TestEngineReplayAndLegacyMetrics(t *testing.T) {
	dir := t.TempDir()
	ca := testpki.NewCA(t, "legacy CA")
	key1024, err := rsa.GenerateKey(rand.Reader, 1024)
	require.NoError(t, err)
	partner := ca.IssueKey(t, dir, "legacy partner", key1024)
	modern := ca.IssueRSA(t, dir, "modern partner")
	backend := soapBackend(t, 200, "text/xml", okResponse)
	cfg := config.Default()
	p := config.DefaultPolicy()
	p.Trust.CAFiles = []string{ca.WriteCert(t, dir)}
	p.Trust.MinRSABits = 1024
	cfg.Policies = map[string]config.Policy{"partner": p}
	cfg.Routes = []config.Route{
		{Name: "orders", Path: "/orders", Backend: backend.URL, Policy: "partner"},
		{Name: "open", Path: "/open", Backend: backend.URL, Policy: "none"},
	}
	cfg.ApplyDefaults()
	require.NoError(t, cfg.Validate())
	m := metrics.New(metrics.BuildInfo{Version: "test"})
	gw, err := New(&cfg, m, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(gw.Close)
	srv := httptest.NewServer(gw)
	t.Cleanup(srv.Close)

	// From start-up: engine series on the secured route only, replay
	// series of the memory store, legacy series of no signer.
	assert.NotNil(t, series(t, m, metrics.NameEngineDuration, map[string]string{"route": "orders", "engine": "template"}))
	assert.Nil(t, series(t, m, metrics.NameEngineDuration, map[string]string{"route": "open"}), "a pass-through route runs no engine")
	for _, r := range metrics.ReplayResults() {
		assert.Equal(t, 0.0, gathered(t, m, metrics.NameReplayOperations, map[string]string{"store": "memory", "result": r}))
	}
	assert.Equal(t, 0.0, gathered(t, m, metrics.NameLegacyAlgorithms, map[string]string{"policy": "partner", "algorithm": legacyKeyLabel, "signer": "none"}))
	capacity := series(t, m, metrics.NameReplayCapacity, map[string]string{"store": "memory"})
	require.NotNil(t, capacity)
	assert.Equal(t, float64(cfg.Replay.MaxEntries), capacity.GetGauge().GetValue())

	sign := func(l *testpki.Leaf) []byte {
		o := signer.DefaultOptions()
		o.Signer, o.Certificate = l.Key, l.Cert
		env := `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><m:GetFiles xmlns:m="urn:example:files"/></soapenv:Body></soapenv:Envelope>`
		out, err := signer.Secure([]byte(env), o)
		require.NoError(t, err)
		return out
	}
	send := func(body []byte) int {
		resp := post(t, srv.URL, body)
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode
	}

	legacyMsg := sign(partner)
	require.Equal(t, 200, send(legacyMsg))
	require.Equal(t, 500, send(legacyMsg), "the replay is rejected")
	require.Equal(t, 200, send(sign(modern)))

	assert.Equal(t, 2.0, gathered(t, m, metrics.NameReplayOperations, map[string]string{"store": "memory", "result": "recorded"}))
	assert.Equal(t, 1.0, gathered(t, m, metrics.NameReplayOperations, map[string]string{"store": "memory", "result": "replayed"}))
	assert.Equal(t, 0.0, gathered(t, m, metrics.NameReplayOperations, map[string]string{"store": "memory", "result": "error"}))
	assert.Equal(t, uint64(3), histogramCount(t, m, metrics.NameReplayDuration, map[string]string{"store": "memory"}))
	entries := series(t, m, metrics.NameReplayEntries, map[string]string{"store": "memory"})
	require.NotNil(t, entries)
	assert.Equal(t, 2.0, entries.GetGauge().GetValue())

	// The legacy message and its replay both verified (the replay fails the
	// policy check afterwards): two messages by the legacy partner, none by
	// the modern one.
	assert.Equal(t, 2.0, gathered(t, m, metrics.NameLegacyAlgorithms,
		map[string]string{"policy": "partner", "algorithm": legacyKeyLabel, "signer": partner.Cert.Subject.String()}))
	assert.Equal(t, -1.0, gathered(t, m, metrics.NameLegacyAlgorithms, map[string]string{"signer": modern.Cert.Subject.String()}))
	assert.Equal(t, 0.0, gathered(t, m, metrics.NameLegacyAlgorithms, map[string]string{"policy": "partner", "algorithm": legacyKeyLabel, "signer": "none"}))

	// Every verified message's engine time is recorded, under the engine
	// that verified it.
	dom := histogramCount(t, m, metrics.NameEngineDuration, map[string]string{"route": "orders", "engine": "dom"})
	tpl := histogramCount(t, m, metrics.NameEngineDuration, map[string]string{"route": "orders", "engine": "template"})
	assert.Equal(t, uint64(3), dom+tpl)
	assert.GreaterOrEqual(t, dom, uint64(1), "the first message of its shape goes to the DOM engine")
}

func TestLegacyLabel(t *testing.T) {
	for _, tc := range []struct {
		name, kind, value, want string
	}{
		{"ok/sha1 digest", "digest", crypto.AlgDigestSHA1, "sha1"},
		{"ok/rsa-1_5 key transport", "key_transport", crypto.AlgRSA15, "rsa-1_5"},
		{"ok/cbc data", "data", crypto.AlgAES128CBC, "aes128-cbc"},
		{"ok/rsa 1024", "key_size", "1024", legacyKeyLabel},
		{"fail/rsa 2048", "key_size", "2048", ""},
		{"fail/p-521", "key_size", "521", ""},
		{"fail/sha256 digest", "digest", crypto.AlgDigestSHA256, ""},
		{"fail/c14n is never legacy", "c14n", crypto.AlgDigestSHA1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, legacyLabel(tc.kind, tc.value))
		})
	}
}

// TestReplayStoreErrorsCounted: a Redis that does not answer (nothing
// listens at its address) fails the look-up closed, and the look-up is
// counted as an error of the redis store; Redis exports no fill.
func TestReplayStoreErrorsCounted(t *testing.T) {
	k := newSigningPKI(t)
	backend := soapBackend(t, 200, "text/xml", okResponse)
	addr := testnet.RefusedAddr(t) // the dial is refused
	cfg := config.Default()
	p := config.DefaultPolicy()
	p.Trust.CAFiles = []string{k.caFile}
	cfg.Policies = map[string]config.Policy{"partner": p}
	cfg.Routes = []config.Route{{Name: "orders", Path: "/orders", Backend: backend.URL, Policy: "partner"}}
	cfg.Replay.Store, cfg.Replay.Redis.Addr = "redis", addr
	cfg.ApplyDefaults()
	require.NoError(t, cfg.Validate())
	m := metrics.New(metrics.BuildInfo{Version: "test"})
	gw, err := New(&cfg, m, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(gw.Close)
	srv := httptest.NewServer(gw)
	t.Cleanup(srv.Close)

	assert.Equal(t, 0.0, gathered(t, m, metrics.NameReplayOperations, map[string]string{"store": "redis", "result": "error"}), "the series exists at zero")
	resp := post(t, srv.URL, signedRequest(t, k))
	_, _ = io.Copy(io.Discard, resp.Body)
	require.Equal(t, http.StatusInternalServerError, resp.StatusCode, "fail closed")
	assert.Equal(t, 1.0, gathered(t, m, metrics.NameReplayOperations, map[string]string{"store": "redis", "result": "error"}))
	assert.Equal(t, 0.0, gathered(t, m, metrics.NameReplayOperations, map[string]string{"store": "redis", "result": "recorded"}))
	assert.Equal(t, 1.0, gathered(t, m, metrics.NameSecurityFailure, map[string]string{"policy": "partner", "reason": "replay_store"}))
	assert.Nil(t, series(t, m, metrics.NameReplayEntries, nil), "Redis exports no fill")
	assert.Equal(t, uint64(1), histogramCount(t, m, metrics.NameReplayDuration, map[string]string{"store": "redis"}))
}
