package gateway

import (
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/replay"
	"github.com/wssgw/wssgw/internal/signer"
)

// metricValue reads one series of a counter or gauge family, by labels.
func metricValue(t *testing.T, m *metrics.Metrics, name string, want map[string]string) float64 {
	t.Helper()
	fams, err := m.Registry().Gather()
	require.NoError(t, err)
	for _, fam := range fams {
		if fam.GetName() != name {
			continue
		}
	series:
		for _, s := range fam.Metric {
			labels := map[string]string{}
			for _, l := range s.Label {
				labels[l.GetName()] = l.GetValue()
			}
			for k, v := range want {
				if labels[k] != v {
					continue series
				}
			}
			if s.Counter != nil {
				return s.Counter.GetValue()
			}
			return s.Gauge.GetValue()
		}
	}
	t.Fatalf("no series %s%v", name, want)
	return 0
}

// TestMemoryStoreStartupWindow: a restarted gateway with the memory replay
// store has forgotten what it accepted before, so for the window after
// start-up it refuses messages created before start-up (reason
// replay_store_reset) and accepts fresh ones; the start-up is logged,
// counted, and the window gauge is 1 (issue 16).
func TestMemoryStoreStartupWindow(t *testing.T) {
	k := newSigningPKI(t)
	rec := newRecorder(t)
	cfg := config.Default()
	p := config.DefaultPolicy()
	p.Trust.CAFiles = []string{k.caFile}
	cfg.Policies = map[string]config.Policy{"partner": p}
	cfg.Routes = []config.Route{{Name: "orders", Path: "/orders", Backend: rec.URL, Policy: "partner"}}
	cfg.ApplyDefaults()
	require.NoError(t, cfg.Validate())

	m := metrics.New(metrics.BuildInfo{Version: "test"})
	// Before any gateway: the series exist at zero, for the alerts.
	assert.Equal(t, 0.0, metricValue(t, m, metrics.NameReplayStoreResets, map[string]string{metrics.LabelCause: metrics.ReplayResetLost}))
	assert.Equal(t, 0.0, metricValue(t, m, metrics.NameReplayStoreResetWindow, nil))

	// Signed two seconds before the gateway starts: the sign of a message a
	// previous process may have accepted.
	o := signer.DefaultOptions()
	o.Signer, o.Certificate = k.partner.Key, k.partner.Cert
	o.Now = func() time.Time { return time.Now().Add(-2 * time.Second) }
	env := `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><m:GetFiles xmlns:m="urn:example:files"/></soapenv:Body></soapenv:Envelope>`
	old, err := signer.Secure([]byte(env), o)
	require.NoError(t, err)

	var logs logBuffer
	gw, err := New(&cfg, m, slog.New(slog.NewJSONHandler(&logs, nil)))
	require.NoError(t, err)
	t.Cleanup(gw.Close)
	srv := httptest.NewServer(gw)
	t.Cleanup(srv.Close)

	resp := post(t, srv.URL, old)
	body, _ := io.ReadAll(resp.Body)
	assert.Equal(t, 500, resp.StatusCode, "%s", body)
	assert.Contains(t, string(body), "InvalidSecurity", "the uniform fault")
	assert.Empty(t, rec.requests(), "refused before the backend")
	assert.Equal(t, 1.0, metricValue(t, m, metrics.NameSecurityFailure, map[string]string{metrics.LabelPolicy: "partner", metrics.LabelReason: "replay_store_reset"}))

	resp = post(t, srv.URL, signedRequest(t, k))
	body, _ = io.ReadAll(resp.Body)
	assert.Equal(t, 200, resp.StatusCode, "a fresh message passes: %s", body)

	assert.Equal(t, 1.0, metricValue(t, m, metrics.NameReplayStoreResets, map[string]string{metrics.LabelCause: metrics.ReplayResetStartup}))
	assert.Equal(t, 0.0, metricValue(t, m, metrics.NameReplayStoreResets, map[string]string{metrics.LabelCause: metrics.ReplayResetLost}))
	assert.Equal(t, 1.0, metricValue(t, m, metrics.NameReplayStoreResetWindow, nil))

	var line map[string]any
	for _, rec := range logs.all(t) {
		if rec["component"] == "replay" {
			require.Nil(t, line, "one line per reset")
			line = rec
		}
	}
	require.NotNil(t, line, "the start-up reset is logged:\n%s", logs.String())
	assert.Equal(t, "INFO", line["level"])
	assert.Equal(t, replay.CauseStartup, line["cause"])
	at, err := time.Parse(time.RFC3339Nano, line["at"].(string))
	require.NoError(t, err)
	end, err := time.Parse(time.RFC3339Nano, line["window_end"].(string))
	require.NoError(t, err)
	assert.Equal(t, p.Timestamp.MaxAge+2*p.Timestamp.FutureSkew, end.Sub(at), "the window is maxAge + 2×futureSkew")
}

// TestReplayResetCauses: the metric's cause values are the store's.
func TestReplayResetCauses(t *testing.T) {
	assert.Equal(t, []string{replay.CauseStartup, replay.CauseLost}, metrics.ReplayResetCauses())
}
