package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/wssgw/wssgw/internal/config"
	"github.com/wssgw/wssgw/internal/gateway"
	"github.com/wssgw/wssgw/internal/metrics"
)

func newServeCmd() *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "serve --config FILE",
		Short: "Run the gateway",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(file, cmd.Flags())
			if err != nil {
				return err
			}
			return run(cmd.Context(), cfg, nil)
		},
	}
	addConfigFlags(cmd, &file, "wssgw.yaml")
	return cmd
}

// run serves cfg until SIGTERM or SIGINT, then drains. onListen, if not nil,
// is called with the bound addresses once both listeners are up.
func run(ctx context.Context, cfg *config.Config, onListen func(data, admin net.Addr)) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, os.Interrupt)
	defer stop()
	log := newLogger(cfg.Log, os.Stderr)
	m := metrics.New(buildInfo())
	srv, err := gateway.NewServer(cfg, m, log)
	if err != nil {
		return err
	}
	srv.OnListen = onListen
	log.Info("starting", "version", version, "commit", commit, "routes", len(cfg.Routes))
	return srv.Run(ctx)
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
