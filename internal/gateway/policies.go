package gateway

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"strings"
	"time"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/reload"
	"github.com/wssgw/wssgw/internal/replay"
	"github.com/wssgw/wssgw/internal/template"
	"github.com/wssgw/wssgw/internal/trust"
	"github.com/wssgw/wssgw/internal/wss"
)

// policies are the compiled security policies with the replay store they
// share. Each compiled policy keeps its key material fresh until it is
// closed. A configuration reload hands the replay store and every policy
// whose configuration did not change to the next gateway (carry.go), so
// that neither replay entries nor learned templates are lost; each is
// closed by the last gateway that owns it.
type policies struct {
	byName    map[string]*wss.Policy
	templates map[string]*template.Store
	metrics   map[string]*metrics.PolicyMetrics
	compiled  map[string]*compiled
	ocsp      map[string]*ocspRun // policies with trust.ocsp enabled
	store     replay.Store
	observed  replay.Store // store with its metrics (replay.go): what the policies use
	storeKey  string       // replayKey of store
	ownsStore bool         // false while borrowed from the previous gateway, or handed on
}

// compiled is one policy made ready: what it was built from, so that a
// reload can tell whether it may be kept, and how to stop it.
type compiled struct {
	policy    *wss.Policy
	templates *template.Store // nil with templates off
	cfg       config.Policy
	tcfg      config.Templates
	stop      context.CancelFunc // stops its pollers and its certificate export
	owned     bool               // false while borrowed, or after being handed on
}

// ocspRun is a policy's OCSP checker and what keeps it fetching. It is
// kept over a reload whenever the policy's trust.ocsp section is
// unchanged, even when the policy is compiled anew, so that its cache of
// responses survives: with onUnknown: reject, a cold cache would refuse
// partners until the first fetches.
type ocspRun struct {
	checker *trust.OCSPChecker
	cfg     config.OCSP
	stop    context.CancelFunc
	owned   bool // as compiled.owned
}

// newPolicies compiles the policies that routes use and starts reloading
// their certificates and keys (Kubernetes Secret rotation). prev, when not
// nil, is the running gateway's: its replay store and its unchanged
// policies are borrowed instead of built (see carry.go for when they
// change hands).
func newPolicies(cfg *config.Config, m *metrics.Metrics, log *slog.Logger, prev *policies) (*policies, error) {
	ps := &policies{byName: map[string]*wss.Policy{}, templates: map[string]*template.Store{}, metrics: map[string]*metrics.PolicyMetrics{}, compiled: map[string]*compiled{}, ocsp: map[string]*ocspRun{}}
	used := map[string]bool{}
	for _, r := range cfg.Routes {
		if r.Policy != config.PolicyNone {
			used[r.Policy] = true
		}
		if r.IsEgress() {
			used[r.Egress.Response.Policy] = true // verifies the partner's responses
		}
	}
	if len(used) == 0 {
		return ps, nil
	}
	if err := ps.openStore(cfg.Replay, resetWindow(cfg, used), m, log, prev); err != nil {
		return nil, err
	}
	reasons := []string{"unknown"}
	for _, r := range wss.Reasons() {
		reasons = append(reasons, r.String())
	}
	for name := range used {
		c := prev.reusable(name, cfg, ps.store)
		if c != nil {
			ps.openOCSP(name, cfg, m, log, prev) // borrows the kept policy's checker
			// Unchanged: keep it, and its learned templates, but look at
			// its files now rather than at the next poll.
			if err := c.policy.Refresh(); err != nil {
				log.Warn("config reload: key material of a kept policy failed to reload; keeping the previous version", "policy", name, "error", err)
			}
			c = &compiled{policy: c.policy, templates: c.templates, cfg: c.cfg, tcfg: c.tcfg, stop: c.stop}
		} else {
			var err error
			if c, err = compile(name, cfg, ps.observed, ps.openOCSP(name, cfg, m, log, prev), m, log); err != nil {
				ps.close()
				return nil, err
			}
		}
		ps.compiled[name] = c
		ps.byName[name] = c.policy
		if c.templates != nil {
			ps.templates[name] = c.templates
		}
		ps.metrics[name] = m.Policy(name, reasons)
		ps.metrics[name].InitStripped(wss.UnsignedHeader, wss.UnsignedAttribute, wss.UnsignedComment)
		ps.metrics[name].InitLegacy(legacyLabels()...)
	}
	return ps, nil
}

// compile builds one policy, with its OCSP checker (nil when off), and
// starts keeping its key material fresh.
func compile(name string, cfg *config.Config, store replay.Store, ocsp *trust.OCSPChecker, m *metrics.Metrics, log *slog.Logger) (*compiled, error) {
	ro := reload.Options{Logger: log, Observer: keyReloadObserver(m)}
	p, err := wss.CompileWith(name, cfg.Policies[name], store, ro, ocsp)
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	ctx, stop := context.WithCancel(context.Background())
	p.Run(ctx)
	context.AfterFunc(ctx, m.WatchCertificates(policyCertificates(p)))
	c := &compiled{policy: p, cfg: cfg.Policies[name], tcfg: cfg.Templates, stop: stop, owned: true}
	if tc := cfg.Templates; tc.Enabled {
		c.templates = template.NewStore(p, template.Options{
			MaxTemplates: tc.MaxTemplates, MaxBytes: int(tc.MaxBytes),
			LearnPerSecond: tc.LearnPerSecond, LearnBurst: tc.LearnBurst, ShadowRate: tc.ShadowRate,
			MaxMessageBytes: int(tc.MaxMessageBytes), LearnAfter: tc.LearnAfter,
		}, m.Templates(name))
	}
	return c, nil
}

// openOCSP returns the OCSP checker of policy name, nil when its OCSP is
// off: prev's when its trust.ocsp section is the same, else a new one,
// running and exported.
func (ps *policies) openOCSP(name string, cfg *config.Config, m *metrics.Metrics, log *slog.Logger, prev *policies) *trust.OCSPChecker {
	oc := cfg.Policies[name].Trust.OCSP
	if !oc.Enabled {
		return nil
	}
	if prev != nil {
		if r, ok := prev.ocsp[name]; ok && reflect.DeepEqual(r.cfg, oc) {
			ps.ocsp[name] = &ocspRun{checker: r.checker, cfg: oc, stop: r.stop}
			return r.checker
		}
	}
	o := oc.Options()
	o.Logger = log
	chk := trust.NewOCSPChecker(o)
	chk.Observe(m.WatchOCSP(name, ocspSource(chk)))
	ctx, stop := context.WithCancel(context.Background())
	go chk.Run(ctx)
	ps.ocsp[name] = &ocspRun{checker: chk, cfg: oc, stop: stop, owned: true}
	return chk
}

// keyReloadObserver counts failed reloads of a policy's files by kind,
// which the reloader's source name tells (wss.Compile names them after
// their configuration keys).
func keyReloadObserver(m *metrics.Metrics) func(string, error) {
	kinds := map[string]func(string, error){}
	for _, k := range metrics.KeyKinds() {
		kinds[k] = m.KeyReloadObserver(k)
	}
	return func(source string, err error) {
		kind := metrics.KeyKindTrust
		switch {
		case strings.Contains(source, ".decryptionKeys["):
			kind = metrics.KeyKindDecryption
		case strings.HasSuffix(source, ".credentialsFile"):
			kind = metrics.KeyKindCredentials
		}
		kinds[kind](source, err)
	}
}

// policyCertificates reports the certificates a policy holds now: its trust
// store's and its decryption keys'.
func policyCertificates(p *wss.Policy) metrics.CertificateSource {
	return func(yield func(string, *x509.Certificate)) {
		if t := p.Trust(); t != nil {
			for _, c := range t.Certificates() {
				yield(metrics.UseTrust, c)
			}
		}
		for _, k := range p.DecryptionKeys() {
			if k != nil && k.Certificate != nil {
				yield(metrics.UseDecryption, k.Certificate)
			}
		}
	}
}

// ocspSource reports a policy's OCSP cache to the metrics at scrape time.
func ocspSource(o *trust.OCSPChecker) metrics.OCSPSource {
	return func() (map[string]int, float64) {
		st := o.Stats()
		return st.ByStatus, st.Oldest.Seconds()
	}
}

// close stops the policies and closes the replay store this gateway owns;
// what it borrowed or handed on is its successor's to close.
func (ps *policies) close() {
	for _, c := range ps.compiled {
		if c.owned {
			c.stop()
		}
	}
	for _, r := range ps.ocsp {
		if r.owned {
			r.stop()
		}
	}
	if ps.store != nil && ps.ownsStore {
		_ = ps.store.Close()
	}
}

// resetWindow is the longest window after a replay store reset in which
// one of the used policies refuses messages created before it
// (wss.ResetWindow); the window gauge and the log line use it.
func resetWindow(cfg *config.Config, used map[string]bool) time.Duration {
	var w time.Duration
	for name := range used {
		if p := cfg.Policies[name]; p.Replay != "off" {
			w = max(w, wss.ResetWindow(p))
		}
	}
	return w
}

// onReplayReset logs and counts a replay store reset (issue 16): an ERROR
// when the store lost its keys under the running gateway, an INFO line
// when it began empty with this process, which is every start-up of the
// memory store.
func onReplayReset(window time.Duration, m *metrics.Metrics, log *slog.Logger) func(replay.Reset) {
	return func(r replay.Reset) {
		m.ReplayStoreReset(r.Cause)
		level, msg := slog.LevelError, "replay store lost its keys: messages created before the loss are refused until the window ends (reason replay_store_reset)"
		if r.Cause == replay.CauseStartup {
			level, msg = slog.LevelInfo, "replay store starts empty: messages created before start-up are refused until the window ends (reason replay_store_reset)"
		}
		log.LogAttrs(context.Background(), level, msg,
			slog.String("component", "replay"), slog.String("cause", r.Cause), slog.String("detail", r.Detail),
			slog.Time("at", r.At), slog.Time("window_end", r.At.Add(window)))
	}
}

// newReplayStore opens the configured replay store. Redis is not dialed
// here: an unreachable Redis rejects secured requests (fail closed) but
// does not keep the gateway from starting and serving other routes.
func newReplayStore(rc config.Replay, window time.Duration, m *metrics.Metrics, log *slog.Logger) (replay.Store, error) {
	onReset := onReplayReset(window, m, log)
	if rc.Store != "redis" {
		return replay.NewMemory(replay.MemoryOptions{MaxEntries: rc.MaxEntries, StartupReset: true, OnReset: onReset}), nil
	}
	o := replay.RedisOptions{
		Addr: rc.Redis.Addr, Username: rc.Redis.Username, DB: rc.Redis.DB,
		KeyPrefix: rc.Redis.KeyPrefix, OpTimeout: rc.Redis.Timeout,
		Logger: log, OnReset: onReset, Durable: rc.Redis.Durable,
	}
	if f := rc.Redis.PasswordFile; f != "" {
		pw, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("gateway: replay.redis.passwordFile: %w", err)
		}
		o.Password = strings.TrimRight(string(pw), "\r\n")
	}
	if rc.Redis.TLS {
		o.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
		if rc.Redis.CAFile != "" {
			pool, err := loadCAPool(rc.Redis.CAFile)
			if err != nil {
				return nil, err
			}
			o.TLS.RootCAs = pool
		}
	}
	return replay.NewRedis(o)
}
