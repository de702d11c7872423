package gateway

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ocsp"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/testpki"
)

// TestOCSPRevocation: with trust.ocsp on, the partner's first message (a
// cold cache, onUnknown: accept) passes and registers its certificate; once
// the background fetch learns it is revoked, its messages are refused,
// and the fetch and the cache are in the metrics.
func TestOCSPRevocation(t *testing.T) {
	dir := t.TempDir()
	pki := testpki.NewCA(t, "wssgw OCSP CA")
	k := &signingPKI{caFile: pki.WriteCert(t, dir), partner: pki.IssueRSA(t, dir, "partner"), gateway: pki.Issue(t, dir, "gateway")}
	ca, caKey := pki.Cert, pki.Key
	var revoked atomic.Bool
	// The responder answers only once the cold-cache request is done: the
	// background fetch starts with the gateway and would otherwise race it.
	coldDone := make(chan struct{})
	responder := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		select {
		case <-coldDone:
		case <-req.Context().Done():
			return
		}
		now := time.Now()
		r := ocsp.Response{Status: ocsp.Good, SerialNumber: k.partner.Cert.SerialNumber, ThisUpdate: now.Add(-time.Minute), NextUpdate: now.Add(time.Hour)}
		if revoked.Load() {
			r.Status, r.RevokedAt = ocsp.Revoked, now.Add(-time.Minute)
		}
		der, err := ocsp.CreateResponse(ca, ca, r, caKey)
		require.NoError(t, err)
		_, _ = w.Write(der)
	}))
	t.Cleanup(responder.Close)
	f := newSigningFrontConfig(t, soapBackend(t, 200, "text/xml", okResponse).URL, k, func(r *config.Responses) { r.Sign = false; r.CertFile, r.KeyFile = "", "" },
		func(c *config.Config) {
			p := c.Policies["partner"]
			p.Trust.OCSP = config.OCSP{Enabled: true, ResponderURL: responder.URL, OnUnknown: config.OCSPAccept}
			c.Policies["partner"] = p
		})
	revoked.Store(true)
	resp := post(t, f.URL, signedRequest(t, k))
	_, _ = io.Copy(io.Discard, resp.Body)
	require.Equal(t, 200, resp.StatusCode, "cold cache, onUnknown: accept")
	close(coldDone)
	require.Eventually(t, func() bool {
		resp := post(t, f.URL, signedRequest(t, k))
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode == 500
	}, 10*time.Second, 20*time.Millisecond, "revoked once fetched")
	want := `
# HELP wssgw_ocsp_fetches_total OCSP responses fetched in the background, by policy and result: good, revoked and unknown (the responder's answer); error (no usable response: unreachable, HTTP error, bad signature, older than the one held).
# TYPE wssgw_ocsp_fetches_total counter
wssgw_ocsp_fetches_total{policy="partner",result="error"} 0
wssgw_ocsp_fetches_total{policy="partner",result="good"} 0
wssgw_ocsp_fetches_total{policy="partner",result="revoked"} 1
wssgw_ocsp_fetches_total{policy="partner",result="unknown"} 0
`
	require.NoError(t, testutil.GatherAndCompare(f.metrics.Registry(), strings.NewReader(want), metrics.NameOCSPFetches))
	n, err := testutil.GatherAndCount(f.metrics.Registry(), metrics.NameOCSPCertificates)
	require.NoError(t, err)
	assert.Equal(t, len(metrics.OCSPStatuses()), n)
}
