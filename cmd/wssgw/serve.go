package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/gateway"
	"github.com/wssgw/wssgw/internal/metrics"
	"github.com/wssgw/wssgw/internal/reload"
)

func newServeCmd() *cobra.Command {
	var (
		file     string
		interval time.Duration
	)
	cmd := &cobra.Command{
		Use:   "serve --config FILE",
		Short: "Run the gateway",
		Long: "Run the gateway. SIGHUP reloads the configuration; so does a change of the " +
			"configuration file or of a file it names, polled every --reload-interval.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(file, cmd.Flags())
			if err != nil {
				return err
			}
			src := &configSource{interval: interval, load: func() (*config.Config, error) {
				return loadConfig(file, cmd.Flags())
			}, files: func(cfg *config.Config) []string {
				return append([]string{file}, cfg.Files()...)
			}}
			return run(cmd.Context(), cfg, nil, src)
		},
	}
	addConfigFlags(cmd, &file, "wssgw.yaml")
	cmd.Flags().DurationVar(&interval, "reload-interval", reload.DefaultInterval,
		"how often the configuration file and the files it names are checked for changes; 0 turns the watch off (SIGHUP still reloads)")
	return cmd
}

// configSource is where a running gateway reloads its configuration from.
type configSource struct {
	load     func() (*config.Config, error)
	files    func(*config.Config) []string // the files to watch for a configuration
	interval time.Duration                 // 0: no watch
}

// run serves cfg until SIGTERM or SIGINT, then drains. SIGHUP, and with a
// watch interval a change of the watched files, reloads the configuration
// from src (nil: nothing to reload from, as for the demo). onListen, if not
// nil, is called with the bound addresses once both listeners are up.
func run(ctx context.Context, cfg *config.Config, onListen func(data, admin net.Addr), src *configSource) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, os.Interrupt)
	defer stop()
	log := newLogger(cfg.Log, os.Stderr)
	// SIGHUP used to end the process (its default action); it is caught
	// from here on.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	m := metrics.New(buildInfo())
	srv, err := gateway.NewServer(cfg, m, log)
	if err != nil {
		return err
	}
	srv.OnListen = onListen
	log.Info("starting", "version", version, "commit", commit, "routes", len(cfg.Routes))
	go reloadLoop(ctx, srv, src, cfg, hup, log)
	return srv.Run(ctx)
}

// reloadLoop reloads on SIGHUP and when the watched files change, one
// reload at a time, until ctx ends.
func reloadLoop(ctx context.Context, srv *gateway.Server, src *configSource, cfg *config.Config, hup <-chan os.Signal, log *slog.Logger) {
	changed := make(chan struct{}, 1)
	var watched atomic.Pointer[[]string] // the files of the running configuration
	if src != nil && src.interval > 0 {
		files := src.files(cfg)
		watched.Store(&files)
		w := reload.NewWatch(func() []string { return *watched.Load() }, src.interval)
		go w.Run(ctx, func() {
			select {
			case changed <- struct{}{}:
			default: // a reload is pending already
			}
		})
	}
	for {
		var trigger string
		select {
		case <-ctx.Done():
			return
		case <-hup:
			trigger = "SIGHUP"
		case <-changed:
			trigger = "file changed"
		}
		if src == nil {
			log.Warn("reload requested, but there is no configuration file to reload from", "trigger", trigger)
			continue
		}
		log.Info("reloading configuration", "trigger", trigger)
		next, err := srv.Reload(src.load)
		if err == nil && src.interval > 0 {
			files := src.files(next)
			watched.Store(&files)
		}
	}
}

func newLogger(lc config.Log, w io.Writer) *slog.Logger {
	var level slog.Level
	if err := level.UnmarshalText([]byte(lc.Level)); err != nil {
		level = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: level}
	if lc.Format == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}
