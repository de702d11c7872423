package gateway

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/budget"
	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/metrics"
)

// budgetFront is a gateway with a signed route (orders) and a policy-none
// route (plain) to a backend that counts what reaches it, with a memory
// budget of 64 KiB and bodies of up to 64 KiB.
type budgetFront struct {
	*httptest.Server
	gw      *Gateway
	m       *metrics.Metrics
	log     *logBuffer
	k       *signingPKI
	arrived atomic.Int64
}

func newBudgetFront(t *testing.T, more func(*config.Config)) *budgetFront {
	t.Helper()
	f := &budgetFront{log: &logBuffer{}, k: newSigningPKI(t)}
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		f.arrived.Add(1)
		w.Header().Set("Content-Type", "text/xml; charset=utf-8")
		_, _ = io.WriteString(w, okResponse)
	}))
	t.Cleanup(backend.Close)
	cfg := config.Default()
	p := config.DefaultPolicy()
	p.Trust.CAFiles = []string{f.k.caFile}
	p.Replay = "off"
	cfg.Policies = map[string]config.Policy{"partner": p}
	cfg.Templates.Enabled = false // every message on the DOM engine
	cfg.Routes = []config.Route{
		{Name: "orders", Path: "/orders", Backend: backend.URL, Policy: "partner", MaxBodyBytes: 64 << 10},
		{Name: "plain", Path: "/plain", Backend: backend.URL, MaxBodyBytes: 64 << 10},
	}
	cfg.Server.Memory = config.Memory{InflightBytes: 64 << 10, DOMWorkers: 1, QueueWait: 0, RetryAfter: 3 * time.Second}
	if more != nil {
		more(&cfg)
	}
	cfg.ApplyDefaults()
	require.NoError(t, cfg.Validate())
	f.m = metrics.New(metrics.BuildInfo{Version: "test"})
	gw, err := New(&cfg, f.m, slog.New(slog.NewJSONHandler(f.log, nil)))
	require.NoError(t, err)
	t.Cleanup(gw.Close)
	f.gw = gw
	f.Server = httptest.NewServer(gw)
	t.Cleanup(f.Close)
	return f
}

func (f *budgetFront) rejections(route, reason string) float64 {
	return seriesValue(f.m, metrics.NameOverloadRejections, map[string]string{metrics.LabelRoute: route, metrics.LabelReason: reason})
}

// held is wssgw_memory_inflight_bytes.
func (f *budgetFront) held() float64 {
	return gaugeValue(f.m, metrics.NameMemoryInflight)
}

// seriesValue is the counter of name whose labels include want; -1 when
// there is none.
func seriesValue(m *metrics.Metrics, name string, want map[string]string) float64 {
	fams, _ := m.Registry().Gather()
	for _, fam := range fams {
		if fam.GetName() != name {
			continue
		}
		for _, s := range fam.Metric {
			n := 0
			for _, l := range s.Label {
				if want[l.GetName()] == l.GetValue() {
					n++
				}
			}
			if n == len(want) {
				return s.GetCounter().GetValue()
			}
		}
	}
	return -1
}

func gaugeValue(m *metrics.Metrics, name string) float64 {
	fams, _ := m.Registry().Gather()
	for _, fam := range fams {
		if fam.GetName() == name {
			return fam.Metric[0].GetGauge().GetValue()
		}
	}
	return -1
}

// TestOverBudgetIs503AndNotForwarded: a request whose body does not fit in
// what other requests leave of the budget gets the 503 fault with
// Retry-After before its body is read, on a secured and on a pass-through
// route, declared or chunked; nothing reaches the backend; the refusal is
// counted and logged as what it is; once the others end, the same request
// passes.
func TestOverBudgetIs503AndNotForwarded(t *testing.T) {
	f := newBudgetFront(t, nil)
	signed := signedRequest(t, f.k)
	other := f.gw.budget.Lease() // what other requests in flight hold
	require.NoError(t, other.Reserve(64<<10-len64(signed)+1))
	tests := []struct {
		name, path string
		chunked    bool
	}{
		{"fail/secured-declared", "/orders", false},
		{"fail/secured-chunked", "/orders", true},
		{"fail/plain-declared", "/plain", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body io.Reader = strings.NewReader(string(signed))
			if tt.chunked {
				body = io.MultiReader(body) // no length: sent chunked
			}
			req, _ := http.NewRequest(http.MethodPost, f.URL+tt.path, body)
			req.Header.Set("Content-Type", "text/xml; charset=utf-8")
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
			assert.Equal(t, "3", resp.Header.Get("Retry-After"))
			assert.Contains(t, string(b), "Service overloaded, retry later")
			assert.Contains(t, string(b), "soap:Server", "a SOAP 1.1 Server fault: not the sender's mistake")
		})
	}
	assert.Zero(t, f.arrived.Load(), "nothing refused reaches the backend")
	assert.Equal(t, 2.0, f.rejections("orders", budget.ReasonMemory))
	assert.Equal(t, 1.0, f.rejections("plain", budget.ReasonMemory))
	assert.Equal(t, 0.0, f.rejections("orders", budget.ReasonQueue))
	assert.Equal(t, 2.0, seriesValue(f.m, metrics.NameRequests, map[string]string{metrics.LabelRoute: "orders", metrics.LabelOutcome: metrics.Overloaded.String()}))
	lines := f.log.requests(t)
	require.Len(t, lines, 3)
	for _, l := range lines {
		assert.Equal(t, "overloaded", l["outcome"])
		assert.Equal(t, budget.ReasonMemory, l["reason"])
		assert.EqualValues(t, 503, l["status"])
	}
	assert.Equal(t, float64(other.Held()), f.held(), "refused requests hold nothing")
	assert.Equal(t, float64(64<<10), gaugeValue(f.m, metrics.NameMemoryBudget))

	other.Release()
	resp := post(t, f.URL, signed)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, int64(1), f.arrived.Load())
	assert.Zero(t, f.gw.budget.Held())
}

func len64(b []byte) int64 { return int64(len(b)) }

// TestNoDOMWorkerIs503: with every DOM-engine worker busy and no queue
// wait, a secured request gets the 503 fault (reason dom_queue), not a
// security fault, and is not counted as a security failure.
func TestNoDOMWorkerIs503(t *testing.T) {
	f := newBudgetFront(t, nil)
	release, err := f.gw.budget.Acquire(0)
	require.NoError(t, err)
	resp := post(t, f.URL, signedRequest(t, f.k))
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Equal(t, "3", resp.Header.Get("Retry-After"))
	assert.Empty(t, resp.Header.Get("Connection"), "the body was read: the connection stays")
	assert.Equal(t, 1.0, f.rejections("orders", budget.ReasonQueue))
	assert.Zero(t, seriesValue(f.m, metrics.NameRequests, map[string]string{metrics.LabelRoute: "orders", metrics.LabelOutcome: metrics.SecurityRejected.String()}))
	assert.Zero(t, f.arrived.Load())
	assert.Equal(t, budget.ReasonQueue, f.log.requests(t)[0]["reason"])
	assert.Zero(t, f.gw.budget.Held())
	release()
	resp = post(t, f.URL, signedRequest(t, f.k))
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

// TestBudgetReleased: whatever way a request ends, its bytes go back:
// accepted and forwarded, refused by the security stage, refused by the
// gate, and a client gone mid-body.
func TestBudgetReleased(t *testing.T) {
	f := newBudgetFront(t, nil)
	signed := signedRequest(t, f.k)
	tampered := strings.Replace(string(signed), "GetFiles", "GetFilez", 2)
	tests := []struct {
		name, path, body string
		status           int
	}{
		{"ok/forwarded", "/orders", string(signed), http.StatusOK},
		{"ok/pass-through", "/plain", testEnvelope, http.StatusOK},
		{"fail/security", "/orders", tampered, http.StatusInternalServerError},
		{"fail/gate", "/plain", "<not-soap/>", http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := http.Post(f.URL+tt.path, "text/xml; charset=utf-8", strings.NewReader(tt.body))
			require.NoError(t, err)
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			assert.Equal(t, tt.status, resp.StatusCode)
			assert.Zero(t, f.gw.budget.Held())
			assert.Zero(t, f.held())
		})
	}
	t.Run("fail/client-gone-mid-body", func(t *testing.T) {
		conn, err := net.Dial("tcp", f.Listener.Addr().String())
		require.NoError(t, err)
		_, err = fmt.Fprintf(conn, "POST /orders HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml\r\nContent-Length: 60000\r\n\r\n<soapenv:Envelope")
		require.NoError(t, err)
		// The declared length is held while the body is awaited.
		require.Eventually(t, func() bool { return f.gw.budget.Held() == 60000 }, 5*time.Second, 5*time.Millisecond)
		require.NoError(t, conn.Close())
		require.Eventually(t, func() bool { return f.gw.budget.Held() == 0 }, 5*time.Second, 5*time.Millisecond)
		assert.Zero(t, f.held())
	})
	assert.Zero(t, f.rejections("orders", budget.ReasonMemory))
}

// TestBodyOverWholeBudgetIs413: a plain envelope larger than the whole
// budget could never be admitted: it is too large (413), not overloaded,
// even when the route's maxBodyBytes allows it; declared or chunked.
func TestBodyOverWholeBudgetIs413(t *testing.T) {
	f := newBudgetFront(t, func(c *config.Config) { c.Server.Memory.InflightBytes = 4 << 10 })
	body := `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body>` +
		strings.Repeat("x", 8<<10) + `</soapenv:Body></soapenv:Envelope>`
	for _, tt := range []struct {
		name    string
		chunked bool
	}{{"fail/declared", false}, {"fail/chunked", true}} {
		t.Run(tt.name, func(t *testing.T) {
			var r io.Reader = strings.NewReader(body)
			if tt.chunked {
				r = io.MultiReader(r)
			}
			resp, err := http.Post(f.URL+"/plain", "text/xml; charset=utf-8", r)
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
			assert.Empty(t, resp.Header.Get("Retry-After"))
		})
	}
	assert.Zero(t, f.arrived.Load())
	assert.Zero(t, f.rejections("plain", budget.ReasonMemory))
	assert.Zero(t, f.gw.budget.Held())
	resp, err := http.Post(f.URL+"/plain", "text/xml; charset=utf-8", strings.NewReader(testEnvelope))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "a body within the budget passes")
}
