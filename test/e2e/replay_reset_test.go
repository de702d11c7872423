package e2e

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/replay/replaytest"
	"github.com/wssgw/wssgw/internal/signer"
	"github.com/wssgw/wssgw/internal/soap"
)

// resetSkew is the signed policy's futureSkew in TestReplayStoreLostData: a
// message created less than this after a live loss is refused too (it
// could have been accepted, future-dated, just before the loss), so the
// test waits this long before its fresh messages.
const resetSkew = time.Second

// signNow signs a fresh SOAP 1.1 message as the partner, now, with the
// repository's signer (WSS4J's messages are the same to the gateway, but a
// JVM per message would make the timing of this test loose).
func signNow(t *testing.T, pki *partnerPKI) []byte {
	t.Helper()
	o := signer.DefaultOptions()
	o.Signer, o.Certificate = pki.client.Key, pki.client.Cert
	out, err := signer.Secure(plainEnvelope(soap.NS11, payload(256)), o)
	require.NoError(t, err)
	return out
}

// TestReplayStoreLostData (issue 16): Redis, the shared replay store,
// restarts empty (no persistence) or is flushed under a running gateway.
// Replays of messages accepted before are then refused as
// replay_store_reset, not accepted as new; fresh messages pass; each loss
// is logged as an ERROR and counted, and the window gauge is open.
func TestReplayStoreLostData(t *testing.T) {
	srv := replaytest.StartServer(t)
	pki := newPartnerPKI(t)
	backend := newRecordingBackend(t, []byte("<ok/>"), "text/xml")
	cfg := strings.Replace(pki.securedConfig(backend.URL, redisReplay(srv.Addr())),
		"  signed:\n    require: [signature, timestamp]\n",
		"  signed:\n    require: [signature, timestamp]\n    timestamp: {futureSkew: "+resetSkew.String()+"}\n", 1)
	require.Contains(t, cfg, "futureSkew")
	gw := startGateway(t, cfg)
	ct := contentType("1.1")
	reasons := 0
	// send posts msg and returns the reason of its request log line ("" when
	// accepted), skipping replay_store refusals: right after Redis comes
	// back, a pooled connection the restart broke fails one request closed.
	send := func(msg []byte) string {
		t.Helper()
		for range 5 {
			resp := gw.post("/signed", ct, bytes.NewReader(msg))
			body := readAll(t, resp)
			reasons++
			got := requestReasons(t, gw, reasons)[reasons-1]
			if got == "" {
				require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
			} else {
				require.Equal(t, http.StatusInternalServerError, resp.StatusCode, "%s", body)
				assert.Contains(t, string(body), "InvalidSecurity", "the uniform fault")
			}
			if got != "replay_store" {
				return got
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("the replay store stayed unavailable\n%s", lastLog(gw))
		return ""
	}
	lost := func() float64 {
		return value(t, scrape(t, gw), "wssgw_replay_store_resets_total", map[string]string{"cause": "lost"})
	}

	// The gateway found an empty Redis at start-up; messages signed since
	// pass.
	first := signNow(t, pki)
	require.Equal(t, "", send(first))
	require.Equal(t, "replay", send(first))
	require.Equal(t, 1, backend.count())
	fams := scrape(t, gw)
	assert.Equal(t, 1.0, value(t, fams, "wssgw_replay_store_resets_total", map[string]string{"cause": "startup"}))
	assert.Equal(t, 0.0, lost())

	t.Run("fail/redis-restarted-empty", func(t *testing.T) {
		srv.Restart()
		// Without the canary, this replay would be accepted: the restarted
		// Redis has no key for it.
		assert.Equal(t, "replay_store_reset", send(first))
		assert.Equal(t, 1, backend.count(), "the replay must not reach the backend")
		assert.Equal(t, 1.0, lost())
		assert.Equal(t, 1.0, value(t, scrape(t, gw), "wssgw_replay_store_reset_window", nil))

		time.Sleep(resetSkew + 100*time.Millisecond)
		fresh := signNow(t, pki)
		assert.Equal(t, "", send(fresh), "a message created after the loss passes")
		assert.Equal(t, "replay", send(fresh), "and is remembered again")
		assert.Equal(t, 2, backend.count())
	})

	t.Run("fail/flushall", func(t *testing.T) {
		accepted := signNow(t, pki)
		require.Equal(t, "", send(accepted))
		c := redis.NewClient(&redis.Options{Addr: srv.Addr(), DisableIdentity: true})
		defer c.Close()
		require.NoError(t, c.FlushAll(context.Background()).Err())

		assert.Equal(t, "replay_store_reset", send(accepted))
		assert.Equal(t, 2.0, lost())
		time.Sleep(resetSkew + 100*time.Millisecond)
		assert.Equal(t, "", send(signNow(t, pki)))
		assert.Equal(t, 4, backend.count())
	})

	// One ERROR line per loss, naming the cause; the start-up one is INFO.
	var levels []string
	for _, l := range gw.logs.find("replay store lost its keys: messages created before the loss are refused until the window ends (reason replay_store_reset)") {
		levels = append(levels, l["level"].(string)+" "+l["cause"].(string))
		assert.NotEmpty(t, l["detail"])
		assert.NotEmpty(t, l["window_end"])
	}
	assert.Equal(t, []string{"ERROR lost", "ERROR lost"}, levels)
	assert.Len(t, gw.logs.find("replay store starts empty: messages created before start-up are refused until the window ends (reason replay_store_reset)"), 1)
	assert.Equal(t, 2.0, value(t, scrape(t, gw), "wssgw_security_failures_total", map[string]string{"policy": "signed", "reason": "replay_store_reset"}))
}
