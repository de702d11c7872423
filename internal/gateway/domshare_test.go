package gateway

import (
	"bytes"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/budget"
	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/metrics"
)

// newShareFront is a budgetFront with templates on, two DOM workers on two
// CPUs and half of them for the DOM engine while hits flow
// (server.memory.domShare 0.5: one worker), and a template learned and
// trusted for signedRequest's shape: hits are flowing when it returns.
func newShareFront(t *testing.T, queueWait time.Duration) (*budgetFront, []byte) {
	t.Helper()
	procs := gomaxprocs
	gomaxprocs = func() int { return 2 }
	t.Cleanup(func() { gomaxprocs = procs })
	f := newBudgetFront(t, func(c *config.Config) {
		c.Templates.Enabled = true
		c.Templates.ShadowRate = 0
		c.Templates.LearnAfter = 1 // the hit's shape is learned at once
		c.Server.Memory.DOMWorkers = 2
		c.Server.Memory.DOMShare = 0.5
		c.Server.Memory.QueueWait = queueWait
	})
	hit := signedRequest(t, f.k)
	// Learned on the DOM engine, then past the generic Body's required
	// shadow checks (TestTemplateHitsDoNotWaitForDOMWorkers).
	for range 10 {
		require.Equal(t, http.StatusOK, post(t, f.URL, hit).StatusCode)
	}
	require.Equal(t, 9.0, seriesValue(f.m, metrics.NameTemplateLookups, map[string]string{metrics.LabelRoute: "orders", metrics.LabelResult: metrics.LookupHit}))
	return f, hit
}

// TestFreshShapesKeepToTheDOMShare (issue 14): a flood of fresh shapes
// cannot take the CPU the DOM share leaves to template hits. With one DOM
// job running (a fresh shape on its worker, held by the test: a
// CPU-bound message of any length) and hits flowing, fresh-shape requests
// do not get the second worker, which domWorkers alone would give them:
// every hit is answered and forwarded while not one fresh shape reaches
// the DOM engine; once the job ends they all run, one at a time. Counts,
// not times: without the share the first fresh shape would take the free
// worker and be forwarded among the hits.
func TestFreshShapesKeepToTheDOMShare(t *testing.T) {
	f, hit := newShareFront(t, time.Hour)
	release, err := f.gw.budget.Acquire(0)
	require.NoError(t, err)
	const flood = 4
	fresh := make([][]byte, flood)
	for i := range fresh {
		fresh[i] = freshShapeRequest(t, f.k)
	}
	var want int64
	for _, m := range fresh {
		want += int64(len(m))
	}
	done := make(chan int, flood)
	for _, m := range fresh {
		go func() {
			resp, err := http.Post(f.URL+"/orders", "text/xml; charset=utf-8", bytes.NewReader(m))
			if err != nil {
				done <- -1
				return
			}
			resp.Body.Close()
			done <- resp.StatusCode
		}()
	}
	for f.gw.budget.Held() < want && len(done) == 0 {
		time.Sleep(time.Millisecond) // every body admitted; on to the DOM engine's queue
	}
	before := f.arrived.Load()
	const hits = 20
	for range hits {
		require.Equal(t, http.StatusOK, post(t, f.URL, hit).StatusCode)
	}
	assert.Equal(t, before+hits, f.arrived.Load(), "every hit forwarded, no fresh shape")
	assert.Empty(t, done, "no fresh shape got past the DOM share while a DOM job ran")

	release()
	for range flood {
		assert.Equal(t, http.StatusOK, <-done)
	}
	assert.Equal(t, before+hits+flood, f.arrived.Load())
	assert.Zero(t, f.rejections("orders", budget.ReasonShare))
}

// TestDOMShareRefusalIs503: with no queue wait, a fresh shape that finds
// the DOM engine at its share while hits flow gets the 503 fault with
// Retry-After, counted and logged with reason dom_share, though a worker
// is free for domWorkers; hits go on.
func TestDOMShareRefusalIs503(t *testing.T) {
	f, hit := newShareFront(t, 0)
	release, err := f.gw.budget.Acquire(0)
	require.NoError(t, err)
	defer release()
	resp := post(t, f.URL, freshShapeRequest(t, f.k))
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Equal(t, "3", resp.Header.Get("Retry-After"))
	assert.Equal(t, 1.0, f.rejections("orders", budget.ReasonShare))
	assert.Zero(t, f.rejections("orders", budget.ReasonQueue))
	logs := f.log.requests(t)
	assert.Equal(t, budget.ReasonShare, logs[len(logs)-1]["reason"])
	assert.Equal(t, http.StatusOK, post(t, f.URL, hit).StatusCode)
}
