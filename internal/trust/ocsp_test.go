package trust

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ocsp"

	"github.com/wssgw/wssgw/internal/testpki"
)

// ocspResponder is a real `openssl ocsp` responder over an index.txt CA
// database the test writes: the interoperability that matters is with a
// responder we did not write.
type ocspResponder struct {
	url string
	cmd *exec.Cmd
}

// needOpenSSL skips without openssl, except in CI where it is required.
func needOpenSSL(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("openssl")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("openssl is required in CI: %v", err)
		}
		t.Skip("openssl not installed: OCSP responder tests skipped")
	}
	return p
}

// freeAddr reserves a loopback port for the responder (openssl needs one
// up front, and the leaves name it in their AIA).
func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// indexLine is one row of an openssl CA database: V(alid) or R(evoked).
func indexLine(c *x509.Certificate, revokedAt time.Time) string {
	const f = "060102150405Z"
	status, rev := "V", ""
	if !revokedAt.IsZero() {
		status, rev = "R", revokedAt.UTC().Format(f)
	}
	return fmt.Sprintf("%s\t%s\t%s\t%X\tunknown\t/CN=%s\n", status, c.NotAfter.UTC().Format(f), rev, c.SerialNumber, c.Subject.CommonName)
}

// startResponder runs `openssl ocsp` for ca on addr, answering from the
// index with a NextUpdate one minute ahead, until the test ends or stop.
func startResponder(t *testing.T, openssl, addr string, ca *testpki.Issuer, index string) *ocspResponder {
	dir := t.TempDir()
	caFile := testpki.WriteFile(t, dir, "ca.pem", testpki.CertsPEM(ca.Cert))
	keyFile := testpki.WriteFile(t, dir, "ca.Key", testpki.PKCS8PEM(t, ca.Key))
	idx := testpki.WriteFile(t, dir, "index.txt", []byte(index))
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(openssl, "ocsp", "-index", idx, "-port", port,
		"-CA", caFile, "-rsigner", caFile, "-rkey", keyFile, "-nmin", "1", "-ignore_err")
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	require.NoError(t, cmd.Start())
	r := &ocspResponder{url: "http://" + addr, cmd: cmd}
	t.Cleanup(r.stop)
	// Wait for its banner, not by connecting: the responder serves one
	// connection at a time and a probe that sends nothing wedges it.
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "waiting for OCSP client connections") },
		10*time.Second, 20*time.Millisecond, "openssl ocsp did not start: %s", out)
	return r
}

// testWriter sends log lines to the test's log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// syncBuffer collects the responder's output while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func (r *ocspResponder) stop() {
	if r.cmd.Process != nil && r.cmd.ProcessState == nil {
		_ = r.cmd.Process.Kill()
		_ = r.cmd.Wait()
	}
}

type ocspFixture struct {
	root                      *testpki.Issuer
	resp                      *ocspResponder
	good, revoked, notInIndex *x509.Certificate
	rootFile                  string
	now                       atomic.Int64 // offset from the wall clock, ns
	mu                        sync.Mutex
	results                   []string
}

func newOCSPFixture(t *testing.T) *ocspFixture {
	openssl := needOpenSSL(t)
	addr := freeAddr(t)
	f := &ocspFixture{root: testpki.NewIssuer(t, "OCSP Root", nil)}
	aia := func(c *x509.Certificate) { c.OCSPServer = []string{"http://" + addr} }
	f.good, _ = f.root.Issue(t, "good", nil, aia)
	f.revoked, _ = f.root.Issue(t, "revoked", nil, aia)
	f.notInIndex, _ = f.root.Issue(t, "stranger", nil, aia)
	f.rootFile = testpki.WriteFile(t, t.TempDir(), "root.crt", testpki.CertsPEM(f.root.Cert))
	index := indexLine(f.good, time.Time{}) + indexLine(f.revoked, time.Now().Add(-time.Hour))
	f.resp = startResponder(t, openssl, addr, f.root, index)
	return f
}

func (f *ocspFixture) clock() time.Time { return time.Now().Add(time.Duration(f.now.Load())) }

func (f *ocspFixture) checker(t *testing.T, mod func(*OCSPOptions)) *OCSPChecker {
	o := OCSPOptions{Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil)), RejectUnknown: true, RejectStale: true, MaxStaleness: time.Minute, Clock: f.clock,
		Observer: func(r string) { f.mu.Lock(); f.results = append(f.results, r); f.mu.Unlock() }}
	if mod != nil {
		mod(&o)
	}
	return NewOCSPChecker(o)
}

func (f *ocspFixture) store(t *testing.T, c *OCSPChecker) *Store {
	s, err := NewStore(Options{CAFiles: []string{f.rootFile}, OCSP: c, Clock: f.clock})
	require.NoError(t, err)
	return s
}

func TestOCSPAgainstOpenSSL(t *testing.T) {
	f := newOCSPFixture(t)
	ctx := context.Background()
	tests := []struct {
		name string
		opts func(*OCSPOptions)
		leaf *x509.Certificate
		err  error
	}{
		{name: "ok/good", leaf: f.good},
		{name: "fail/revoked", leaf: f.revoked, err: ErrRevoked},
		{name: "fail/revoked-even-when-unknown-accepted", leaf: f.revoked, err: ErrRevoked,
			opts: func(o *OCSPOptions) { o.RejectUnknown, o.RejectStale = false, false }},
		{name: "fail/unknown", leaf: f.notInIndex, err: ErrOCSP},
		{name: "ok/unknown-accepted", leaf: f.notInIndex, opts: func(o *OCSPOptions) { o.RejectUnknown = false }},
		{name: "ok/responder-override", leaf: f.good, opts: func(o *OCSPOptions) { o.ResponderURL = f.resp.url }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := f.checker(t, tt.opts)
			s := f.store(t, c)
			// The first verification only registers the leaf: the cache is
			// cold, so the status is unknown.
			_, err := s.Verify(tt.leaf, nil, testpki.T0, PurposeSigning)
			if c.opts.RejectUnknown {
				require.ErrorIs(t, err, ErrOCSP, "cold cache")
			}
			c.FetchDue(ctx)
			_, err = s.Verify(tt.leaf, nil, testpki.T0, PurposeSigning)
			if tt.err != nil {
				require.ErrorIs(t, err, tt.err)
				return
			}
			require.NoError(t, err)
		})
	}
	f.mu.Lock()
	assert.Contains(t, f.results, OCSPGood)
	assert.Contains(t, f.results, OCSPRevoked)
	assert.Contains(t, f.results, OCSPUnknown)
	f.mu.Unlock()
}

func TestOCSPColdCache(t *testing.T) {
	f := newOCSPFixture(t)
	for _, tt := range []struct {
		name          string
		rejectUnknown bool
		err           error
	}{
		{"fail/reject-unknown", true, ErrOCSP},
		{"ok/accept-unknown", false, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := f.store(t, f.checker(t, func(o *OCSPOptions) { o.RejectUnknown = tt.rejectUnknown }))
			_, err := s.Verify(f.good, nil, testpki.T0, PurposeSigning)
			if tt.err != nil {
				require.ErrorIs(t, err, tt.err)
				return
			}
			require.NoError(t, err)
		})
	}
}

// TestOCSPStale: a good response outlives the responder until its
// NextUpdate (one minute, -nmin 1) plus maxStaleness; then onStale decides.
func TestOCSPStale(t *testing.T) {
	f := newOCSPFixture(t)
	ctx := context.Background()
	strict := f.store(t, f.checker(t, nil))
	lenient := f.store(t, f.checker(t, func(o *OCSPOptions) { o.RejectStale = false }))
	for _, s := range []*Store{strict, lenient} {
		s.opts.OCSP.Watch(f.good, f.root.Cert, true)
		s.opts.OCSP.FetchDue(ctx)
		_, err := s.Verify(f.good, nil, testpki.T0, PurposeSigning)
		require.NoError(t, err)
	}
	f.resp.stop()
	f.now.Store(int64(90 * time.Second)) // past NextUpdate, inside maxStaleness
	for _, s := range []*Store{strict, lenient} {
		s.opts.OCSP.FetchDue(ctx) // fails: the responder is gone; the old response stays
		_, err := s.Verify(f.good, nil, testpki.T0, PurposeSigning)
		require.NoError(t, err, "within maxStaleness")
	}
	f.now.Store(int64(3 * time.Minute))
	_, err := strict.Verify(f.good, nil, testpki.T0, PurposeSigning)
	require.ErrorIs(t, err, ErrOCSP)
	assert.Equal(t, ReasonOCSP, Reason(err))
	_, err = lenient.Verify(f.good, nil, testpki.T0, PurposeSigning)
	require.NoError(t, err, "onStale: accept")
	st := strict.opts.OCSP.Stats()
	assert.Equal(t, 1, st.ByStatus[OCSPStale])
	assert.Greater(t, st.Oldest, 3*time.Minute-time.Second)
	f.mu.Lock()
	assert.Contains(t, f.results, OCSPError)
	f.mu.Unlock()
}

// TestOCSPRunFetchesInBackground: a known certificate is fetched when Run
// starts; one seen in a message soon after its first verification.
func TestOCSPRunFetchesInBackground(t *testing.T) {
	f := newOCSPFixture(t)
	dir := t.TempDir()
	c := f.checker(t, nil)
	s, err := NewStore(Options{CAFiles: []string{f.rootFile}, OCSP: c, Clock: f.clock,
		KnownCertFiles: []string{testpki.WriteFile(t, dir, "good.crt", testpki.CertsPEM(f.good))}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go c.Run(ctx)
	require.Eventually(t, func() bool {
		_, err := s.Verify(f.good, nil, testpki.T0, PurposeSigning)
		return err == nil
	}, 10*time.Second, 20*time.Millisecond, "known certificate")
	// Cold: no status yet, or, when the background loop already fetched it
	// (it runs beside this goroutine on a loaded machine), revoked; never
	// accepted, and never a fetch on this path.
	_, err = s.Verify(f.revoked, nil, testpki.T0, PurposeSigning)
	require.Error(t, err, "cold")
	require.True(t, errors.Is(err, ErrOCSP) || Reason(err) == ReasonRevoked, "cold: %v", err)
	require.Eventually(t, func() bool {
		_, err := s.Verify(f.revoked, nil, testpki.T0, PurposeSigning)
		return err != nil && Reason(err) == ReasonRevoked
	}, 10*time.Second, 20*time.Millisecond, "seen certificate")
}

func TestOCSPResponderFailures(t *testing.T) {
	root := testpki.NewIssuer(t, "Root", nil)
	leaf, _ := root.Issue(t, "leaf", nil)
	srv := func(h http.HandlerFunc) string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		hs := &http.Server{Handler: h, ReadHeaderTimeout: time.Second}
		go func() { _ = hs.Serve(l) }()
		t.Cleanup(func() { _ = hs.Close() })
		return "http://" + l.Addr().String()
	}
	junk := srv(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("not DER")) })
	status := srv(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) })
	for _, tt := range []struct {
		name, url string
		issuer    *x509.Certificate
	}{
		{"fail/no-responder", "", root.Cert},
		{"fail/http-500", status, root.Cert},
		{"fail/not-an-ocsp-response", junk, root.Cert},
		{"fail/unreachable", "http://" + freeAddr(t), root.Cert},
		{"fail/no-issuer", status, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var results []string
			c := NewOCSPChecker(OCSPOptions{ResponderURL: tt.url, RejectUnknown: true, Timeout: time.Second,
				Observer: func(r string) { results = append(results, r) }})
			c.Watch(leaf, tt.issuer, false)
			c.FetchDue(context.Background())
			require.ErrorIs(t, c.Check(leaf), ErrOCSP)
			if tt.url != "" {
				assert.Equal(t, []string{OCSPError}, results)
			}
		})
	}
}

func TestOCSPSelfSignedAndEviction(t *testing.T) {
	self, _ := testpki.SelfSigned(t, "self")
	root := testpki.NewIssuer(t, "Root", nil)
	c := NewOCSPChecker(OCSPOptions{RejectUnknown: true, MaxEntries: 2})
	require.NoError(t, c.Check(self), "nobody to ask about a self-signed certificate")
	c.Watch(self, nil, true)
	require.NoError(t, c.Check(self), "watched: remembered as self-signed")
	c.FetchDue(context.Background()) // nothing due: no responder call for it
	assert.Equal(t, 0, len(c.Stats().ByStatus), "not counted")
	c.mu.Lock()
	delete(c.ents, string(self.Raw))
	c.mu.Unlock()
	known, _ := root.Issue(t, "known", nil)
	c.Watch(known, root.Cert, true)
	for i := range 3 {
		l, _ := root.Issue(t, fmt.Sprint("seen", i), nil)
		c.Watch(l, root.Cert, false)
	}
	assert.Len(t, c.ents, 2)
	assert.Contains(t, c.ents, string(known.Raw), "known certificates are never evicted")
	assert.Equal(t, 2, c.Stats().ByStatus[OCSPMissing])
}

// TestOCSPRewatchAfterEviction: a leaf whose trust decision is served from
// the verification cache but that the checker evicted is watched again at
// its next verification, and fetched.
func TestOCSPRewatchAfterEviction(t *testing.T) {
	f := newOCSPFixture(t)
	c := f.checker(t, func(o *OCSPOptions) { o.MaxEntries = 1 })
	s := f.store(t, c)
	_, err := s.Verify(f.good, nil, testpki.T0, PurposeSigning)
	require.ErrorIs(t, err, ErrOCSP, "cold")
	c.Watch(f.revoked, f.root.Cert, false) // evicts good
	require.False(t, watching(c, f.good))
	_, err = s.Verify(f.good, nil, testpki.T0, PurposeSigning) // cached decision, unwatched leaf
	require.ErrorIs(t, err, ErrOCSP)
	require.True(t, watching(c, f.good), "watched again")
	c.FetchDue(context.Background())
	_, err = s.Verify(f.good, nil, testpki.T0, PurposeSigning)
	require.NoError(t, err)
}

// TestOCSPPinnedSelfSigned: a pinned self-signed partner passes with OCSP
// on and unknown rejected: there is no responder to ask about it.
func TestOCSPPinnedSelfSigned(t *testing.T) {
	self, _ := testpki.SelfSigned(t, "pinned")
	c := NewOCSPChecker(OCSPOptions{RejectUnknown: true, RejectStale: true})
	s, err := NewStore(Options{PinnedCertFiles: []string{testpki.WriteFile(t, t.TempDir(), "p.crt", testpki.CertsPEM(self))}, OCSP: c})
	require.NoError(t, err)
	for range 2 {
		_, err = s.Verify(self, nil, testpki.T0, PurposeSigning)
		require.NoError(t, err)
	}
}

// BenchmarkVerifyCachedOCSP is BenchmarkVerifyCached with OCSP on and a
// good response cached: what OCSP adds to the fast path (a map read).
func BenchmarkVerifyCachedOCSP(b *testing.B) {
	s, leaf, inter := benchStore(b)
	c := NewOCSPChecker(OCSPOptions{RejectUnknown: true, RejectStale: true, ResponderURL: "http://ocsp.invalid/"})
	s.opts.OCSP = c
	c.Watch(leaf, inter, false)
	c.ents[string(leaf.Raw)].state.Store(&ocspState{resp: &ocsp.Response{Status: ocsp.Good, ThisUpdate: time.Now(), NextUpdate: time.Now().Add(time.Hour)}})
	in := []*x509.Certificate{inter}
	if _, err := s.Verify(leaf, in, testpki.T0, PurposeSigning); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Verify(leaf, in, testpki.T0, PurposeSigning); err != nil {
			b.Fatal(err)
		}
	}
}

// TestOCSPLogsOncePerOutage: a responder that keeps failing is logged at
// its first failure, not at every retry, and its recovery once.
func TestOCSPLogsOncePerOutage(t *testing.T) {
	root := testpki.NewIssuer(t, "Root", nil)
	leaf, _ := root.Issue(t, "leaf", nil)
	var up atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if !up.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		now := time.Now()
		der, err := ocsp.CreateResponse(root.Cert, root.Cert, ocsp.Response{Status: ocsp.Good, SerialNumber: leaf.SerialNumber,
			ThisUpdate: now, NextUpdate: now.Add(time.Hour)}, root.Key)
		require.NoError(t, err)
		_, _ = w.Write(der)
	}))
	defer srv.Close()
	var logs syncBuffer
	var offset atomic.Int64
	c := NewOCSPChecker(OCSPOptions{ResponderURL: srv.URL, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Clock: func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }})
	c.Watch(leaf, root.Cert, true)
	for range 3 {
		c.FetchDue(context.Background())
		offset.Add(int64(ocspRetry + time.Second))
	}
	up.Store(true)
	c.FetchDue(context.Background())
	assert.Equal(t, 1, strings.Count(logs.String(), "OCSP fetch failed"), logs.String())
	assert.Equal(t, 1, strings.Count(logs.String(), "OCSP fetch succeeded again"), logs.String())
	require.NoError(t, c.Check(leaf))
}

// watching reports whether c holds leaf.
func watching(c *OCSPChecker, leaf *x509.Certificate) bool {
	w, _ := c.check(leaf)
	return w
}
