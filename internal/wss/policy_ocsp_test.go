package wss

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ocsp"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/reload"
	"github.com/wssgw/wssgw/internal/testpki"
	"github.com/wssgw/wssgw/internal/trust"
)

// TestPolicyOCSP: trust.ocsp.enabled gives the policy a checker that Run
// fills in the background and that survives a reload of the trust files.
func TestPolicyOCSP(t *testing.T) {
	dir := t.TempDir()
	ca := testpki.NewCA(t, "OCSP CA")
	leaf := ca.Issue(t, dir, "partner")
	fetches := make(chan struct{}, 100)
	responder := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		now := time.Now()
		der, err := ocsp.CreateResponse(ca.Cert, ca.Cert, ocsp.Response{Status: ocsp.Good, SerialNumber: leaf.Cert.SerialNumber,
			ThisUpdate: now.Add(-time.Minute), NextUpdate: now.Add(time.Hour)}, ca.Key)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		_, _ = w.Write(der)
		fetches <- struct{}{}
	}))
	defer responder.Close()

	p := config.DefaultPolicy()
	p.Trust.CAFiles = []string{ca.WriteCert(t, dir)}
	p.Trust.OCSP.Enabled, p.Trust.OCSP.ResponderURL = true, responder.URL
	cp, err := Compile("p", p, nil, reload.Options{Interval: 10 * time.Millisecond})
	require.NoError(t, err)
	require.NotNil(t, cp.OCSP())
	results := make(chan string, 100)
	cp.OCSP().Observe(func(r string) { results <- r })

	_, err = cp.Trust().Verify(leaf.Cert, nil, time.Now(), trust.PurposeSigning)
	require.ErrorIs(t, err, trust.ErrOCSP, "cold cache, onUnknown: reject")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cp.Run(ctx)
	<-fetches
	require.Eventually(t, func() bool {
		_, err := cp.Trust().Verify(leaf.Cert, nil, time.Now(), trust.PurposeSigning)
		return err == nil
	}, 5*time.Second, 10*time.Millisecond)

	old := cp.Trust()
	later := time.Now().Add(time.Second)
	require.NoError(t, os.Chtimes(p.Trust.CAFiles[0], later, later))
	require.Eventually(t, func() bool { return cp.Trust() != old }, 5*time.Second, 10*time.Millisecond, "trust reloaded")
	_, err = cp.Trust().Verify(leaf.Cert, nil, time.Now(), trust.PurposeSigning)
	require.NoError(t, err, "the reloaded store asks the same, warm checker")
	assert.Equal(t, trust.OCSPGood, <-results)
}

func TestPolicyWithoutOCSP(t *testing.T) {
	dir := t.TempDir()
	ca := testpki.NewCA(t, "CA")
	p := config.DefaultPolicy()
	p.Trust.CAFiles = []string{ca.WriteCert(t, dir)}
	cp, err := Compile("p", p, nil, reload.Options{})
	require.NoError(t, err)
	assert.Nil(t, cp.OCSP())
}
