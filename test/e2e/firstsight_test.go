package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	wcrypto "github.com/wssgw/wssgw/internal/crypto"
	"github.com/wssgw/wssgw/internal/testpki"
	"github.com/wssgw/wssgw/internal/testtraffic"
)

// TestFirstSightLanesThroughGateway attacks the first-sight lanes (issue
// 14) through the real binary, at their default share: partner A, whose
// known shapes are hits, floods one-off shapes validly signed with its own
// key (an attacker holding a partner's key). While A's hits flow, A's
// fresh shapes go one at a time through A's lane: the rest get the 503
// with Retry-After at once, counted and logged with reason first_sight,
// and the backend never sees them; the connection stays open. Partner B's
// new shape, sent in the same burst under its own key, is served, and so
// are A's hits.
func TestFirstSightLanesThroughGateway(t *testing.T) {
	dir := t.TempDir()
	ca := testpki.NewCA(t, "lanes CA")
	caFile := ca.WriteCert(t, dir)
	a, b := ca.IssueRSA(t, dir, "partner-a"), ca.IssueRSA(t, dir, "partner-b")
	backend := newRecordingBackend(t, []byte("<ok/>"), "text/xml")
	gw := startGateway(t, fmt.Sprintf(`
listen: 127.0.0.1:0
admin: {listen: 127.0.0.1:0}
routes:
  - {name: mix, path: /mix, backend: %s, policy: mix}
policies:
  mix:
    require: [signature, timestamp]
    trust: {caFiles: [%q], knownCertFiles: [%q, %q]}
`, backend.URL, caFile, a.CertFile, b.CertFile))
	ga := testtraffic.New(1, &wcrypto.KeyPair{Signer: a.Key, Certificate: a.Cert}, time.Now)
	gb := testtraffic.New(2, &wcrypto.KeyPair{Signer: b.Key, Certificate: b.Cert}, time.Now)
	lookups := func(result string) float64 {
		return value(t, scrape(t, gw), "wssgw_template_lookups_total", map[string]string{"route": "mix", "result": result})
	}

	// Everything signed up front, so that the flood follows the first
	// hit at once (the lanes are in force while hits flow).
	const flood, mixed = 24, 8
	msgs := make([]testtraffic.Message, flood)
	for i := range msgs {
		msgs[i] = drawToken(t, ga.Fresh)
	}
	mix := make([]testtraffic.Message, mixed)
	for i := range mix {
		mix[i] = draw(t, ga.Next)
	}
	fromB := drawToken(t, gb.Fresh)
	// A fresh shape of each, accepted while no hit flows (no lanes yet):
	// both claims (the token) are known from now on, each as its key's
	// lane. Then A's mix until its shapes hit.
	for _, g := range []*testtraffic.Generator{ga, gb} {
		require.Equal(t, http.StatusOK, sendMessage(t, gw, drawToken(t, g.Fresh)).StatusCode)
	}
	for i := 0; lookups("hit") == 0; i++ {
		require.Less(t, i, 40, "no template hit after 40 messages of the mix")
		require.Equal(t, http.StatusOK, sendMessage(t, gw, draw(t, ga.Next)).StatusCode)
	}
	before, hits := backend.count(), lookups("hit")

	var wg sync.WaitGroup
	status := make([]int, flood)
	retry := make([]string, flood)
	closed := make([]bool, flood)
	for i, m := range msgs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp := sendMessage(t, gw, m)
			body := readAll(t, resp)
			status[i], retry[i], closed[i] = resp.StatusCode, resp.Header.Get("Retry-After"), resp.Close
			if resp.StatusCode == http.StatusServiceUnavailable {
				assert.Contains(t, string(body), "Service overloaded", "the overload fault")
			}
		}()
	}
	bStatus := sendMessage(t, gw, fromB).StatusCode
	// A's mix beside its flood: its hits never enter a lane.
	mixStatus := map[int]int{}
	for _, m := range mix {
		mixStatus[sendMessage(t, gw, m).StatusCode]++
	}
	wg.Wait()
	mixHits := int(lookups("hit") - hits)

	accepted, shed := 0, 0
	for i := range status {
		switch status[i] {
		case http.StatusOK:
			accepted++
		case http.StatusServiceUnavailable:
			shed++
			assert.NotEmpty(t, retry[i], "a shed fresh shape says when to retry")
			assert.False(t, closed[i], "a lane's refusal keeps the connection")
		default:
			t.Errorf("fresh shape %d: status %d", i, status[i])
		}
	}
	t.Logf("A's %d fresh shapes: %d accepted, %d shed; B: %d; A's mix: %v, %d hits", flood, accepted, shed, bStatus, mixStatus, mixHits)
	assert.Equal(t, http.StatusOK, bStatus, "B's new shape, under its own key, is not in A's lane")
	assert.GreaterOrEqual(t, accepted, 1, "A's lane admits one at a time, not none")
	assert.GreaterOrEqual(t, shed, flood/2, "A's one-off shapes are held to A's lane: %d accepted, %d shed", accepted, shed)
	assert.GreaterOrEqual(t, mixHits, 1, "A's mix hits during the flood")
	assert.GreaterOrEqual(t, mixStatus[http.StatusOK], mixHits, "every hit served: %v", mixStatus)
	assert.Equal(t, mixed, mixStatus[http.StatusOK]+mixStatus[http.StatusServiceUnavailable], "%v", mixStatus)
	mixShed := mixStatus[http.StatusServiceUnavailable] // a new mix shape of A's, a first sight in A's lane
	assert.Equal(t, accepted+1+mixStatus[http.StatusOK], backend.count()-before,
		"the backend got B's message, A's mix and accepted fresh shapes, nothing shed")

	fams := scrape(t, gw)
	assert.Equal(t, float64(shed+mixShed), value(t, fams, "wssgw_overload_rejections_total", map[string]string{"route": "mix", "reason": "first_sight"}))
	assert.Zero(t, value(t, fams, "wssgw_overload_rejections_total", map[string]string{"route": "mix", "reason": "dom_share"}))
	require.Eventually(t, func() bool { return countReason(gw, "first_sight") == shed+mixShed }, 5*time.Second, 10*time.Millisecond,
		"one request log line with reason first_sight per shed message")
}

// draw returns the generator's next message.
func draw(t *testing.T, next func() (testtraffic.Message, error)) testtraffic.Message {
	t.Helper()
	m, err := next()
	require.NoError(t, err)
	return m
}

// drawToken returns the generator's next message that carries its
// certificate as a BinarySecurityToken: one claim per key (a claim named
// another way is a claim of its own, unknown, lane 0, until accepted).
func drawToken(t *testing.T, next func() (testtraffic.Message, error)) testtraffic.Message {
	t.Helper()
	for range 64 {
		if m := draw(t, next); bytes.Contains(m.Signed, []byte("BinarySecurityToken")) {
			return m
		}
	}
	t.Fatal("no message with a BinarySecurityToken in 64")
	return testtraffic.Message{}
}

// sendMessage posts a generated message to /mix with its SOAP version's
// content type.
func sendMessage(t *testing.T, gw *gateway, m testtraffic.Message) *http.Response {
	t.Helper()
	ct := "text/xml; charset=utf-8"
	if bytes.Contains(m.Plain[:min(len(m.Plain), 300)], []byte("http://www.w3.org/2003/05/soap-envelope")) {
		ct = "application/soap+xml; charset=utf-8"
	}
	resp := gw.post("/mix", ct, bytes.NewReader(m.Signed))
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// countReason counts the request log lines with that reason.
func countReason(gw *gateway, reason string) int {
	n := 0
	for _, l := range gw.logs.find("request") {
		if r, _ := l["reason"].(string); strings.EqualFold(r, reason) {
			n++
		}
	}
	return n
}
