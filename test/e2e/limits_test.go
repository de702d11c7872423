package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRateLimitThroughBinary: limits written in YAML (flow maps, a
// fractional rate) reach the running gateway: a client over its rate gets
// a 429 fault with Retry-After, the backend never sees that request, the
// log line names the limit and the client, and /metrics counts it.
func TestRateLimitThroughBinary(t *testing.T) {
	backend := newRecordingBackend(t, []byte(tinyEnvelope), "text/xml; charset=utf-8")
	g := startGateway(t, routeConfig(backend.URL, `    limits:
      perClient: {rate: 0.1, burst: 2}
      total: {maxConcurrent: 64}
clients:
  ipv6PrefixLength: 64
  maxTracked: 100
`))
	for i := range 3 {
		resp := g.post("/orders", "text/xml; charset=utf-8", strings.NewReader(tinyEnvelope))
		body := readAll(t, resp)
		if i < 2 {
			require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
			continue
		}
		require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
		assert.Equal(t, "10", resp.Header.Get("Retry-After"), "a token every 10s")
		assert.Contains(t, string(body), "Too many requests")
	}
	assert.Equal(t, 2, backend.count())

	// The request line is written once the handler returns, which can be
	// after the client has the response.
	var lines []map[string]any
	require.Eventually(t, func() bool {
		lines = g.logs.find("request")
		return len(lines) >= 3
	}, 5*time.Second, 10*time.Millisecond)
	require.Len(t, lines, 3)
	last := lines[2]
	assert.Equal(t, "rate_limited", last["outcome"])
	assert.Equal(t, "client_rate", last["reason"])
	assert.Equal(t, "127.0.0.1/32", last["client"])

	status, raw := get(t, g.admin+"/metrics")
	metrics := string(raw)
	require.Equal(t, http.StatusOK, status)
	assert.Contains(t, metrics, `wssgw_ratelimit_rejections_total{route="orders",scope="client"} 1`)
	assert.Contains(t, metrics, `wssgw_ratelimit_rejections_total{route="orders",scope="signer"} 0`)
	assert.Contains(t, metrics, `wssgw_requests_total{outcome="rate_limited",route="orders"} 1`)
	assert.Contains(t, metrics, `wssgw_ratelimit_tracked_identities{route="orders",scope="client"} 1`)
}
