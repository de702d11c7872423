package gateway

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/metrics"
)

// Server runs the data and admin listeners and drains them on shutdown.
type Server struct {
	conf    atomic.Pointer[config.Config] // the running configuration
	live    atomic.Pointer[live]          // the gateway serving new requests (swap.go)
	tls     atomic.Pointer[tls.Config]    // the data listener's, when TLS is on
	metrics *metrics.Metrics
	log     *slog.Logger
	ready   atomic.Bool

	reloadMu sync.Mutex // serializes reloads
	closed   bool       // under reloadMu: Run has ended

	// OnListen, if set, is called with the bound addresses once both
	// listeners accept connections (the demo and tests use it with port 0).
	OnListen func(data, admin net.Addr)
}

// NewServer builds a server for a validated configuration.
func NewServer(cfg *config.Config, m *metrics.Metrics, log *slog.Logger) (*Server, error) {
	gw, err := New(cfg, m, log)
	if err != nil {
		return nil, err
	}
	s := &Server{metrics: m, log: log}
	s.conf.Store(cfg)
	s.live.Store(newLive(gw))
	m.ConfigLoaded(time.Now())
	return s, nil
}

// Ready reports whether the server accepts traffic: listeners are up and no
// drain has started.
func (s *Server) Ready() bool { return s.ready.Load() }

func (s *Server) setReady(v bool) {
	s.ready.Store(v)
	s.metrics.SetReady(v)
}

// Run serves until ctx is cancelled, then drains: readiness goes false, the
// listeners keep serving for shutdown.delay so load balancers can notice,
// then stop accepting, and in-flight requests get up to
// shutdown.drainTimeout to finish. It returns nil after a drain, timed out
// or not, and an error only if serving could not start or failed.
func (s *Server) Run(ctx context.Context) error {
	defer s.stop()
	dataLn, adminLn, err := s.listen()
	if err != nil {
		return err
	}
	// Every data request's context derives from base, so that a drain
	// that times out can tell its requests they were cut (drain.go).
	base, cut := context.WithCancelCause(context.Background())
	defer cut(nil)
	data := s.dataServer()
	data.BaseContext = func(net.Listener) context.Context { return base }
	running := &handlers{next: data.Handler}
	data.Handler = running
	admin := &http.Server{
		Handler:           s.adminHandler(s.config().Admin),
		ReadHeaderTimeout: 5 * time.Second,
		ErrorLog:          newErrorLog(s.log, metrics.ListenerAdmin, nil),
	}
	errc := make(chan error, 2)
	go func() { errc <- serve(admin, adminLn) }()
	go func() { errc <- serve(data, dataLn) }()
	s.setReady(true)
	s.log.Info("listening", "data", dataLn.Addr().String(), "admin", adminLn.Addr().String(), "tls", s.config().TLS.Enabled())
	if s.OnListen != nil {
		s.OnListen(dataLn.Addr(), adminLn.Addr())
	}
	select {
	case err = <-errc:
		s.setReady(false)
		_ = data.Close()
		_ = admin.Close()
		return err
	case <-ctx.Done():
	}
	s.drain(data, admin, running, cut)
	return nil
}

func (s *Server) listen() (data, admin net.Listener, err error) {
	cfg := s.config()
	data, err = net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, nil, fmt.Errorf("gateway: listen: %w", err)
	}
	admin, err = net.Listen("tcp", cfg.Admin.Listen)
	if err != nil {
		data.Close()
		return nil, nil, fmt.Errorf("gateway: admin.listen: %w", err)
	}
	if cfg.TLS.Enabled() {
		tc, err := serverTLS(cfg.TLS)
		if err != nil {
			data.Close()
			admin.Close()
			return nil, nil, err
		}
		s.tls.Store(tc)
		// Each handshake takes the TLS material of the running
		// configuration: a reload (a renewed certificate, new client CAs)
		// applies to the next connection, without a restart.
		data = tls.NewListener(data, &tls.Config{
			GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) { return s.tls.Load(), nil },
		})
		s.metrics.WatchCertificates(tlsCertificates(&s.tls))
		s.metrics.WatchTLSListener(metrics.ListenerData)
	}
	return data, admin, nil
}

func (s *Server) dataServer() *http.Server {
	sc := s.config().Server
	return &http.Server{
		Handler:           s,
		ReadHeaderTimeout: sc.ReadHeaderTimeout,
		IdleTimeout:       sc.IdleTimeout,
		WriteTimeout:      sc.WriteTimeout,
		MaxHeaderBytes:    int(sc.MaxHeaderBytes),
		ErrorLog: newErrorLog(s.log, metrics.ListenerData, func(reason string) {
			s.metrics.TLSHandshakeFailure(metrics.ListenerData, reason)
		}),
	}
}

func serve(srv *http.Server, ln net.Listener) error {
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("gateway: serve %s: %w", ln.Addr(), err)
	}
	return nil
}

func (s *Server) drain(data, admin *http.Server, running *handlers, cut context.CancelCauseFunc) {
	s.setReady(false)
	sd := s.config().Shutdown
	s.log.Info("draining", "delay", sd.Delay.String(), "timeout", sd.DrainTimeout.String())
	time.Sleep(sd.Delay)
	ctx, cancel := context.WithTimeout(context.Background(), sd.DrainTimeout)
	defer cancel()
	if err := data.Shutdown(ctx); err != nil {
		s.log.Warn("drain timed out; cutting the remaining requests (outcome drain_cut)", "error", err)
		cutRemaining(data, running, cut)
	}
	// The admin listener goes last so that /readyz reports the drain.
	_ = admin.Close()
	s.log.Info("stopped")
}

// tlsCertificates reports the serving certificate chain in use.
func tlsCertificates(cur *atomic.Pointer[tls.Config]) metrics.CertificateSource {
	return func(yield func(string, *x509.Certificate)) {
		for _, c := range cur.Load().Certificates {
			if c.Leaf != nil {
				yield(metrics.UseTLS, c.Leaf)
			}
		}
	}
}

func serverTLS(t config.ServerTLS) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("gateway: tls: %w", err)
	}
	tc := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, NextProtos: []string{"h2", "http/1.1"}}
	if t.MinVersion == "1.3" {
		tc.MinVersion = tls.VersionTLS13
	}
	if t.ClientCAFile != "" {
		if tc.ClientCAs, err = loadCAPool(t.ClientCAFile); err != nil {
			return nil, fmt.Errorf("gateway: tls.clientCAFile: %w", err)
		}
	}
	switch t.ClientAuth {
	case "request":
		tc.ClientAuth = tls.VerifyClientCertIfGiven
	case "require":
		tc.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return tc, nil
}
