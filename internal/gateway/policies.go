package gateway

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/reload"
	"github.com/wssgw/wssgw/internal/replay"
	"github.com/wssgw/wssgw/internal/template"
	"github.com/wssgw/wssgw/internal/trust"
	"github.com/wssgw/wssgw/internal/wss"
)

// policies are the compiled security policies with the replay store they
// share and the context that keeps their key material fresh.
type policies struct {
	byName    map[string]*wss.Policy
	templates map[string]*template.Store
	metrics   map[string]*metrics.PolicyMetrics
	store     replay.Store
	stop      context.CancelFunc
}

// newPolicies compiles the policies that routes use and starts reloading
// their certificates and keys (Kubernetes Secret rotation).
func newPolicies(cfg *config.Config, m *metrics.Metrics, log *slog.Logger) (*policies, error) {
	ps := &policies{byName: map[string]*wss.Policy{}, templates: map[string]*template.Store{}, metrics: map[string]*metrics.PolicyMetrics{}}
	used := map[string]bool{}
	for _, r := range cfg.Routes {
		if r.Policy != config.PolicyNone {
			used[r.Policy] = true
		}
	}
	if len(used) == 0 {
		return ps, nil
	}
	store, err := newReplayStore(cfg.Replay, log)
	if err != nil {
		return nil, err
	}
	ps.store = store
	ctx, cancel := context.WithCancel(context.Background())
	ps.stop = cancel
	reasons := []string{"unknown"}
	for _, r := range wss.Reasons() {
		reasons = append(reasons, r.String())
	}
	ro := reload.Options{Logger: log}
	for name := range used {
		p, err := wss.Compile(name, cfg.Policies[name], store, ro)
		if err != nil {
			ps.close()
			return nil, fmt.Errorf("gateway: %w", err)
		}
		if o := p.OCSP(); o != nil {
			o.Observe(m.WatchOCSP(name, ocspSource(o)))
		}
		p.Run(ctx)
		ps.byName[name] = p
		ps.metrics[name] = m.Policy(name, reasons)
		ps.metrics[name].InitStripped(wss.UnsignedHeader, wss.UnsignedAttribute, wss.UnsignedComment)
		m.WatchCertificates(policyCertificates(p))
		if tc := cfg.Templates; tc.Enabled {
			ps.templates[name] = template.NewStore(p, template.Options{
				MaxTemplates: tc.MaxTemplates, MaxBytes: int(tc.MaxBytes),
				LearnPerSecond: tc.LearnPerSecond, LearnBurst: tc.LearnBurst, ShadowRate: tc.ShadowRate,
				MaxMessageBytes: int(tc.MaxMessageBytes),
			}, m.Templates(name))
		}
	}
	return ps, nil
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

func (ps *policies) close() {
	if ps.stop != nil {
		ps.stop()
	}
	if ps.store != nil {
		_ = ps.store.Close()
	}
}

// newReplayStore opens the configured replay store. Redis is not dialed
// here: an unreachable Redis rejects secured requests (fail closed) but
// does not keep the gateway from starting and serving other routes.
func newReplayStore(rc config.Replay, log *slog.Logger) (replay.Store, error) {
	if rc.Store != "redis" {
		return replay.NewMemory(replay.MemoryOptions{MaxEntries: rc.MaxEntries}), nil
	}
	o := replay.RedisOptions{
		Addr: rc.Redis.Addr, Username: rc.Redis.Username, DB: rc.Redis.DB,
		KeyPrefix: rc.Redis.KeyPrefix, OpTimeout: rc.Redis.Timeout,
		Logger: log,
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
