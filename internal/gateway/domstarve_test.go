package gateway

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/signer"
)

// TestTemplateHitsDoNotWaitForDOMWorkers (issue 14: "a bound on concurrent
// DOM work so fresh shapes cannot starve hits"): with the one DOM-engine
// worker busy and a fresh-shape request queued for it, template hits
// complete, every one of them shadow-checked (shadowRate 1), while the
// worker is still held: a hit takes no worker, and its shadow check only
// a free one (dom.Engine.ProcessIfIdle). The fresh-shape request is
// forwarded only once the worker is free. The queue wait is an hour, so a
// hit that waited for the worker would hang the test, not slow it. A
// template with a generic Body is trusted only after the DOM engine agreed
// on its first 8 hits, which do wait for a worker (internal/template,
// genericShadowHits): the template is warmed past them first.
func TestTemplateHitsDoNotWaitForDOMWorkers(t *testing.T) {
	f := newBudgetFront(t, func(c *config.Config) {
		c.Templates.Enabled = true
		c.Templates.ShadowRate = 1
		c.Templates.LearnAfter = 1 // the hit's shape is learned at once
		c.Server.Memory.DOMWorkers = 1
		c.Server.Memory.QueueWait = time.Hour
	})
	hit := signedRequest(t, f.k)
	lookups := func(result string) float64 {
		return seriesValue(f.m, metrics.NameTemplateLookups, map[string]string{metrics.LabelRoute: "orders", metrics.LabelResult: result})
	}
	shadowsOf := func(result string) float64 {
		return seriesValue(f.m, metrics.NameShadowChecks, map[string]string{metrics.LabelPolicy: "partner", metrics.LabelResult: result})
	}
	shadows := func() float64 { return shadowsOf(metrics.ShadowAgree) }
	// Learn the shape on the DOM engine, then hit it with a free worker
	// past its required first checks: every shadow check runs and agrees.
	const warm = 9
	require.Equal(t, http.StatusOK, post(t, f.URL, hit).StatusCode)
	for range warm {
		require.Equal(t, http.StatusOK, post(t, f.URL, hit).StatusCode)
	}
	require.Equal(t, float64(warm), lookups(metrics.LookupHit), "the requests after the first are hits")
	require.Equal(t, float64(warm), shadows())

	misses := func() float64 { return lookups(metrics.LookupNoTemplate) + lookups(metrics.LookupRejected) }
	missesBefore := misses()

	// Every worker busy, as with fresh-shape messages on the engine.
	release, err := f.gw.budget.Acquire(0)
	require.NoError(t, err)
	fresh := freshShapeRequest(t, f.k)
	freshDone := make(chan int, 1)
	go func() {
		resp, err := http.Post(f.URL+"/orders", "text/xml; charset=utf-8", bytes.NewReader(fresh))
		if err != nil {
			freshDone <- -1
			return
		}
		resp.Body.Close()
		freshDone <- resp.StatusCode
	}()
	for f.gw.budget.Held() < int64(len(fresh)) {
		time.Sleep(time.Millisecond) // its body is admitted; it goes on to wait for the worker
	}

	const hits = 5
	for range hits {
		assert.Equal(t, http.StatusOK, post(t, f.URL, hit).StatusCode)
	}
	assert.Equal(t, float64(warm+hits), lookups(metrics.LookupHit))
	assert.Equal(t, float64(warm), shadows(), "no shadow check took the busy worker: skipped, not waited for")
	assert.Equal(t, float64(hits), shadowsOf(metrics.ShadowSkipped), "every skipped shadow check is counted")
	assert.Equal(t, int64(1+warm+hits), f.arrived.Load(), "every hit forwarded while the worker is held")
	select {
	case code := <-freshDone:
		t.Fatalf("the fresh-shape request finished (%d) while the only DOM worker was held", code)
	default:
	}

	release()
	assert.Equal(t, http.StatusOK, <-freshDone, "the fresh shape gets the worker once it is free")
	assert.Equal(t, int64(2+warm+hits), f.arrived.Load())
	assert.Equal(t, missesBefore+1, misses(), "the fresh shape went to the DOM engine")
	require.Equal(t, http.StatusOK, post(t, f.URL, hit).StatusCode)
	assert.Equal(t, float64(warm+1), shadows(), "with a free worker the shadow check runs again")
}

// freshShapeRequest is a signed request no template matches: a payload
// alone would not do (a template's Body is generic), so its envelope uses
// another prefix, as another partner stack's would.
func freshShapeRequest(t *testing.T, k *signingPKI) []byte {
	t.Helper()
	o := signer.DefaultOptions()
	o.Signer, o.Certificate = k.partner.Key, k.partner.Cert
	env := `<fresh:Envelope xmlns:fresh="http://schemas.xmlsoap.org/soap/envelope/"><fresh:Body>` +
		`<m:PutFiles xmlns:m="urn:example:files">` + strings.Repeat(`<m:f>x</m:f>`, 3) + `</m:PutFiles></fresh:Body></fresh:Envelope>`
	out, err := signer.Secure([]byte(env), o)
	require.NoError(t, err)
	return out
}
