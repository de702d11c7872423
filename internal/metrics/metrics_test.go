package metrics

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestLint(t *testing.T) {
	m := New(BuildInfo{Version: "v1", Revision: "abc"})
	m.Route("orders").Done(Ok, time.Millisecond, 10, 20)
	problems, err := testutil.GatherAndLint(m.Registry())
	require.NoError(t, err)
	assert.Empty(t, problems)
}

// TestExposition pins the exported names, help texts, labels and buckets:
// dashboards and alerts depend on them.
func TestExposition(t *testing.T) {
	m := New(BuildInfo{Version: "v1", Revision: "abc"})
	rm := m.Route("orders")
	rm.Done(Ok, 40*time.Microsecond, 100, 200)
	rm.Done(BackendTimeout, 2*time.Second, 50, 300)
	rm.Backend(30 * time.Microsecond)
	m.InFlight().Inc()
	m.SetReady(true)
	names := []string{NameRequests, NameRequestDuration, NameBackendDuration, NameInFlight, NameReceivedBytes, NameSentBytes, NameReady}

	golden := filepath.Join("testdata", "exposition.txt")
	if *update {
		// Render the current exposition, minus the build info whose Go
		// version label changes with the toolchain.
		out, err := testutil.CollectAndFormat(m.Registry(), expfmt.TypeTextPlain, names...)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(golden, out, 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	require.NoError(t, testutil.GatherAndCompare(m.Registry(), strings.NewReader(string(want)), names...))
}

func TestOutcomeLabels(t *testing.T) {
	seen := map[string]bool{}
	for _, o := range Outcomes() {
		s := o.String()
		assert.NotEqual(t, "unknown", s)
		assert.Regexp(t, `^[a-z_]+$`, s)
		assert.False(t, seen[s], "duplicate outcome label %s", s)
		seen[s] = true
	}
	assert.Equal(t, "unknown", Outcome(200).String())
}

func TestBucketsResolveFastPath(t *testing.T) {
	assert.Less(t, LatencyBuckets[0], 50e-6)
	assert.Greater(t, LatencyBuckets[len(LatencyBuckets)-1], 10.0)
}

func BenchmarkRouteDone(b *testing.B) {
	rm := New(BuildInfo{}).Route("orders")
	b.ReportAllocs()
	for b.Loop() {
		rm.Done(Ok, 100*time.Microsecond, 4096, 4096)
	}
}

func TestCertificateExpiry(t *testing.T) {
	m := New(BuildInfo{Version: "v1", Revision: "abc"})
	notAfter := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	cert := &x509.Certificate{Subject: pkix.Name{CommonName: "partner"}, NotAfter: notAfter}
	var current []*x509.Certificate
	m.WatchCertificates(func(yield func(string, *x509.Certificate)) {
		for _, c := range current {
			yield(UseTrust, c)
			yield(UseTrust, c) // a duplicate is reported once
		}
	})
	assert.Equal(t, 0, testutil.CollectAndCount(m.certs), "no certificate, no series")
	current = []*x509.Certificate{cert}
	assert.Equal(t, 1, testutil.CollectAndCount(m.certs))
	want := "# HELP wssgw_certificate_expiry_timestamp_seconds NotAfter of each loaded certificate as a Unix time, by use (tls, trust, decryption, signing) and subject.\n" +
		"# TYPE wssgw_certificate_expiry_timestamp_seconds gauge\n" +
		"wssgw_certificate_expiry_timestamp_seconds{subject=\"CN=partner\",use=\"trust\"} 1.893553445e+09\n"
	require.NoError(t, testutil.CollectAndCompare(m.certs, strings.NewReader(want)))
	current = nil
	assert.Equal(t, 0, testutil.CollectAndCount(m.certs), "a rotated-out certificate disappears")
}

func TestTemplateSeriesExistAtZero(t *testing.T) {
	m := New(BuildInfo{Version: "v1", Revision: "abc"})
	m.Route("orders").Lookup(LookupHit)
	tm := m.Templates("partner-a")
	tm.Skipped(SkipFull)
	tm.Shadow(ShadowDisagree)
	assert.Equal(t, 1.0, testutil.ToFloat64(m.tpl.lookups.WithLabelValues("orders", LookupHit)))
	assert.Equal(t, 0.0, testutil.ToFloat64(m.tpl.lookups.WithLabelValues("orders", LookupNoTemplate)))
	assert.Equal(t, 1.0, testutil.ToFloat64(m.tpl.skipped.WithLabelValues("partner-a", SkipFull)))
	assert.Equal(t, 1.0, testutil.ToFloat64(m.tpl.shadow.WithLabelValues("partner-a", ShadowDisagree)))
	problems, err := testutil.GatherAndLint(m.Registry())
	require.NoError(t, err)
	assert.Empty(t, problems)
}

// TestBuildInfoCryptoBackend: the build info says which crypto backend
// runs (issue 18), so an operator sees the OpenSSL build on a dashboard.
func TestBuildInfoCryptoBackend(t *testing.T) {
	m := New(BuildInfo{Version: "v1", Revision: "abc", CryptoBackend: "openssl"})
	mfs, err := m.Registry().Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != NameBuildInfo {
			continue
		}
		for _, l := range mf.GetMetric()[0].GetLabel() {
			if l.GetName() == LabelCryptoBackend {
				assert.Equal(t, "openssl", l.GetValue())
				return
			}
		}
	}
	t.Fatalf("%s has no %s label", NameBuildInfo, LabelCryptoBackend)
}
