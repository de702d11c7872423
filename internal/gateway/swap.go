package gateway

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wssgw/wssgw/internal/config"
)

// live is the gateway that serves new requests, with a count of the
// requests it has in flight. A configuration reload swaps in a new one and
// retires the old, which is closed after its last request: every request
// runs on the configuration it started with (issue 16).
type live struct {
	gw      *Gateway
	active  atomic.Int64
	retired atomic.Bool
	once    sync.Once
	drained chan struct{} // closed when retired and no request is left
}

func newLive(gw *Gateway) *live { return &live{gw: gw, drained: make(chan struct{})} }

// release ends a request on l.
func (l *live) release() {
	if l.active.Add(-1) == 0 && l.retired.Load() {
		l.once.Do(func() { close(l.drained) })
	}
}

// retire marks l as replaced and returns a channel closed once its last
// request has ended.
func (l *live) retire() <-chan struct{} {
	l.retired.Store(true)
	if l.active.Load() == 0 {
		l.once.Do(func() { close(l.drained) })
	}
	return l.drained
}

// acquire returns the current gateway with a request counted on it. A
// request that counted itself on a gateway already retired moves to the
// current one: the retired gateway may have found itself drained and be
// closing. (Counting first and checking after is what makes this safe:
// retire sets the flag first and counts after.)
func (s *Server) acquire() *live {
	for {
		l := s.live.Load()
		l.active.Add(1)
		if !l.retired.Load() {
			return l
		}
		l.release()
	}
}

// ServeHTTP serves one request on the current gateway.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l := s.acquire()
	defer l.release() // also when the proxy aborts with a panic
	l.gw.ServeHTTP(w, r)
}

// current is the gateway serving new requests (admin API).
func (s *Server) current() *Gateway { return s.live.Load().gw }

// config is the running configuration.
func (s *Server) config() *config.Config { return s.conf.Load() }

// errClosed refuses a reload after the server stopped.
var errClosed = errors.New("gateway: server stopped")

// Reload loads a configuration with load (validated, the same load as at
// start-up) and makes it the running one: it builds a new gateway,
// carrying over the replay store and unchanged policies (carry.go), and
// the listener's TLS material, and swaps them in atomically; requests in
// flight finish on the gateway they started on, which is closed after the
// last of them. On any error the running configuration stays, untouched.
// Keys that cannot change without a restart keep their running value,
// with a warning (keepRestartOnly). Every attempt is logged and counted
// in wssgw_config_reloads_total. It returns the configuration now running.
func (s *Server) Reload(load func() (*config.Config, error)) (*config.Config, error) {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	cfg, err := load()
	if err == nil {
		err = s.reload(cfg)
	}
	s.metrics.ConfigReload(time.Now(), err)
	if err != nil {
		s.log.Error("config reload failed; the running configuration stays in use", "error", err)
		return s.config(), err
	}
	s.log.Info("config reloaded", "routes", len(cfg.Routes))
	return cfg, nil
}

func (s *Server) reload(cfg *config.Config) error {
	if s.closed {
		return errClosed
	}
	running := s.config()
	for _, k := range keepRestartOnly(running, cfg) {
		s.log.Warn("config reload: this key only changes with a restart; keeping the running value",
			"key", k.key, "running", k.running, "file", k.file)
	}
	var tc *tls.Config
	if cfg.TLS.Enabled() {
		var err error
		if tc, err = serverTLS(cfg.TLS); err != nil {
			return err
		}
	}
	prev := s.live.Load()
	gw, err := build(cfg, s.metrics, s.log, prev.gw)
	if err != nil {
		return err
	}
	commit(prev.gw, gw)
	gw.applyLimits(cfg)
	if tc != nil {
		s.tls.Store(tc)
	}
	s.conf.Store(cfg)
	s.live.Store(newLive(gw))
	go func() {
		<-prev.retire()
		prev.gw.Close()
		s.log.Debug("previous configuration closed after its last request")
	}()
	return nil
}

// stop refuses further reloads and closes the current gateway.
func (s *Server) stop() {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	s.closed = true
	s.current().Close()
}

// keptKey is a key whose change a reload did not apply.
type keptKey struct {
	key           string
	running, file string
}

// keepRestartOnly sets next's restart-only keys to their running values
// and returns those that differed. The listeners are bound and their
// http.Server settings fixed at start-up, the admin mux is built once and
// the logger is shared by everything: changing them means a restart. The
// listener's certificate, client CAs and client authentication do reload;
// only turning TLS on or off does not.
func keepRestartOnly(running, next *config.Config) []keptKey {
	var kept []keptKey
	keep := func(key string, run, file any, set func()) {
		if !reflect.DeepEqual(run, file) {
			kept = append(kept, keptKey{key, fmt.Sprintf("%+v", run), fmt.Sprintf("%+v", file)})
			set()
		}
	}
	r, n := running, next
	keep("listen", r.Listen, n.Listen, func() { n.Listen = r.Listen })
	keep("admin", r.Admin, n.Admin, func() { n.Admin = r.Admin })
	// The data listener's http.Server settings; other server.* keys (the
	// memory budget) are the gateway's and do reload.
	keep("server.readHeaderTimeout", r.Server.ReadHeaderTimeout, n.Server.ReadHeaderTimeout, func() { n.Server.ReadHeaderTimeout = r.Server.ReadHeaderTimeout })
	keep("server.idleTimeout", r.Server.IdleTimeout, n.Server.IdleTimeout, func() { n.Server.IdleTimeout = r.Server.IdleTimeout })
	keep("server.writeTimeout", r.Server.WriteTimeout, n.Server.WriteTimeout, func() { n.Server.WriteTimeout = r.Server.WriteTimeout })
	keep("server.maxHeaderBytes", r.Server.MaxHeaderBytes, n.Server.MaxHeaderBytes, func() { n.Server.MaxHeaderBytes = r.Server.MaxHeaderBytes })
	keep("log", r.Log, n.Log, func() { n.Log = r.Log })
	keep("tls (on or off)", r.TLS.Enabled(), n.TLS.Enabled(), func() { n.TLS = r.TLS })
	return kept
}
